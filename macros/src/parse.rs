//! Tokens to a typed descriptor. Nothing here knows a rule of SPEC.md: it checks only the
//! shape of the input (keys, literals, element type names) and keeps every token for spans.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use stridex_core::{DType, GatherRules, OutOfRange};
use syn::parse::{Parse, ParseStream};
use syn::{bracketed, Ident, LitInt, Token, Visibility};

/// A literal value and the tokens it came from (`-2` is two tokens).
#[derive(Clone)]
pub struct Lit<T> {
    pub value: T,
    pub tokens: TokenStream,
}

/// A bracketed list `[a, b, c]`, with the span of the brackets.
#[derive(Clone)]
pub struct List<T> {
    pub items: Vec<Lit<T>>,
    pub span: Span,
}

impl<T: Copy> List<T> {
    pub fn values(&self) -> Vec<T> {
        self.items.iter().map(|l| l.value).collect()
    }
}

/// `f32[3, 2]`, `i64[]`, `f32[2, 3] strides [1, 2]`; for outputs the type may be left out.
pub struct TensorArg {
    pub key: Ident,
    pub dtype: Option<(Ident, DType)>,
    pub sizes: List<usize>,
    pub strides: Option<List<usize>>,
}

/// `static NAME;` or `pub static NAME;` before the keys: the item form.
pub struct ItemHead {
    pub vis: Visibility,
    pub static_token: Token![static],
    pub name: Ident,
}

pub struct GatherInput {
    pub item: Option<ItemHead>,
    pub rules: Option<(Ident, GatherRules)>,
    pub data: TensorArg,
    pub indices: TensorArg,
    pub axis: Option<Lit<i64>>,
    pub batch_dims: Option<Lit<i64>>,
    pub index_dims: Option<Lit<usize>>,
    pub out_of_range: Option<(Ident, OutOfRange)>,
    pub output: Option<TensorArg>,
}

/// `rules: directml` (SLICE1 windows, the default) or `rules: onnx` (Slice-13).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SliceRules {
    DirectMl,
    Onnx,
}

pub struct SliceInput {
    pub item: Option<ItemHead>,
    pub rules: Option<(Ident, SliceRules)>,
    pub input: TensorArg,
    pub offsets: Option<List<usize>>,
    pub sizes: Option<List<usize>>,
    pub strides: Option<List<i64>>,
    pub starts: Option<List<i64>>,
    pub ends: Option<List<i64>>,
    pub axes: Option<List<i64>>,
    pub steps: Option<List<i64>>,
    pub output: Option<TensorArg>,
}

const GATHER_KEYS: &[&str] =
    &["rules", "data", "indices", "axis", "batch_dims", "index_dims", "out_of_range", "output"];
const SLICE_KEYS: &[&str] =
    &["rules", "input", "offsets", "sizes", "strides", "starts", "ends", "axes", "steps", "output"];

impl Parse for GatherInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let item = parse_item_head(input)?;
        let mut keys = Keys::new("gather!", GATHER_KEYS);
        let (mut rules, mut data, mut indices, mut axis) = (None, None, None, None);
        let (mut batch_dims, mut index_dims, mut out_of_range, mut output) = (None, None, None, None);
        while !input.is_empty() {
            let key = keys.next(input)?;
            match key.to_string().as_str() {
                "rules" => {
                    rules = Some(parse_keyword(
                        input,
                        "rule set",
                        GatherRules::from_name,
                        &["onnx", "openvino", "directml"],
                    )?)
                }
                "data" => data = Some(parse_tensor(input, key, true)?),
                "indices" => indices = Some(parse_tensor(input, key, true)?),
                "axis" => axis = Some(parse_int(input)?),
                "batch_dims" => batch_dims = Some(parse_int(input)?),
                "index_dims" => index_dims = Some(parse_uint(input)?),
                "out_of_range" => {
                    out_of_range = Some(parse_keyword(
                        input,
                        "out-of-range policy",
                        OutOfRange::from_name,
                        &["error", "zero", "clamp"],
                    )?)
                }
                "output" => output = Some(parse_tensor(input, key, false)?),
                _ => unreachable!("Keys::next accepts known keys only"),
            }
            end_of_entry(input)?;
        }
        Ok(GatherInput {
            item,
            rules,
            data: keys.require(data, "data", "data: f32[3, 2]")?,
            indices: keys.require(indices, "indices", "indices: i64[2, 2]")?,
            axis,
            batch_dims,
            index_dims,
            out_of_range,
            output,
        })
    }
}

impl Parse for SliceInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let item = parse_item_head(input)?;
        let mut keys = Keys::new("slice!", SLICE_KEYS);
        let mut s = SliceInput {
            item,
            rules: None,
            input: TensorArg {
                key: Ident::new("input", Span::call_site()),
                dtype: None,
                sizes: List { items: vec![], span: Span::call_site() },
                strides: None,
            },
            offsets: None,
            sizes: None,
            strides: None,
            starts: None,
            ends: None,
            axes: None,
            steps: None,
            output: None,
        };
        let mut tensor = None;
        while !input.is_empty() {
            let key = keys.next(input)?;
            match key.to_string().as_str() {
                "rules" => {
                    let parse_rules = |s: &str| match s {
                        "directml" => Some(SliceRules::DirectMl),
                        "onnx" => Some(SliceRules::Onnx),
                        _ => None,
                    };
                    s.rules =
                        Some(parse_keyword(input, "slice rule set", parse_rules, &["directml", "onnx"])?);
                }
                "input" => tensor = Some(parse_tensor(input, key, true)?),
                "offsets" => s.offsets = Some(parse_list(input, parse_uint)?),
                "sizes" => s.sizes = Some(parse_list(input, parse_uint)?),
                "strides" => s.strides = Some(parse_list(input, parse_int)?),
                "starts" => s.starts = Some(parse_list(input, parse_int)?),
                "ends" => s.ends = Some(parse_list(input, parse_int)?),
                "axes" => s.axes = Some(parse_list(input, parse_int)?),
                "steps" => s.steps = Some(parse_list(input, parse_int)?),
                "output" => s.output = Some(parse_tensor(input, key, false)?),
                _ => unreachable!("Keys::next accepts known keys only"),
            }
            end_of_entry(input)?;
        }
        s.input = keys.require(tensor, "input", "input: f32[1, 1, 4, 4]")?;
        let onnx = matches!(s.rules, Some((_, SliceRules::Onnx)));
        let (needed, not_here): (&[&str], &[&str]) = if onnx {
            (&["starts", "ends"], &["offsets", "sizes", "strides"])
        } else {
            (&["offsets", "sizes", "strides"], &["starts", "ends", "axes", "steps"])
        };
        for k in not_here {
            if let Some(ident) = keys.seen.iter().find(|i| i == k) {
                return Err(syn::Error::new(
                    ident.span(),
                    format!(
                        "`{k}` belongs to {}: {}",
                        if onnx { "DirectML SLICE1 windows" } else { "ONNX Slice" },
                        if onnx {
                            "with `rules: onnx` write starts/ends/axes/steps"
                        } else {
                            "write `rules: onnx` to slice with starts/ends/axes/steps, or use offsets/sizes/strides"
                        }
                    ),
                ));
            }
        }
        for k in needed {
            if !keys.seen.iter().any(|i| i == k) {
                return Err(keys.missing(
                    k,
                    if onnx {
                        "starts: [0], ends: [2]"
                    } else {
                        "offsets: [0, 1], sizes: [2, 3], strides: [1, 2]"
                    },
                ));
            }
        }
        Ok(s)
    }
}

/// Tracks which keys were given: unknown and repeated keys are errors on the key itself.
struct Keys {
    macro_name: &'static str,
    known: &'static [&'static str],
    seen: Vec<Ident>,
}

impl Keys {
    fn new(macro_name: &'static str, known: &'static [&'static str]) -> Keys {
        Keys { macro_name, known, seen: Vec::new() }
    }

    /// Reads `key:`.
    fn next(&mut self, input: ParseStream) -> syn::Result<Ident> {
        let key: Ident = input.parse()?;
        let name = key.to_string();
        if !self.known.contains(&name.as_str()) {
            let hint =
                closest(&name, self.known).map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
            return Err(syn::Error::new(
                key.span(),
                format!(
                    "unknown key `{name}` in {}; {hint}known keys: {}",
                    self.macro_name,
                    self.known.join(", ")
                ),
            ));
        }
        if self.seen.iter().any(|k| *k == name) {
            return Err(syn::Error::new(key.span(), format!("key `{name}` is given twice; keep one")));
        }
        input.parse::<Token![:]>()?;
        self.seen.push(key.clone());
        Ok(key)
    }

    fn require<T>(&self, value: Option<T>, key: &str, example: &str) -> syn::Result<T> {
        value.ok_or_else(|| self.missing(key, example))
    }

    fn missing(&self, key: &str, example: &str) -> syn::Error {
        syn::Error::new(
            Span::call_site(),
            format!("{} is missing the key `{key}`; add it, e.g. `{example}`", self.macro_name),
        )
    }
}

/// The known key nearest to a misspelt one (edit distance <= 2).
fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, &cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    }
    known.iter().copied().filter(|k| distance(name, k) <= 2).min_by_key(|k| distance(name, k))
}

fn parse_item_head(input: ParseStream) -> syn::Result<Option<ItemHead>> {
    let fork = input.fork();
    fork.parse::<Visibility>()?;
    if !fork.peek(Token![static]) {
        return Ok(None);
    }
    let vis: Visibility = input.parse()?;
    let static_token = input.parse()?;
    let name = input.parse()?;
    input.parse::<Token![;]>()?;
    Ok(Some(ItemHead { vis, static_token, name }))
}

fn end_of_entry(input: ParseStream) -> syn::Result<()> {
    if !input.is_empty() {
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

fn parse_keyword<T>(
    input: ParseStream,
    what: &str,
    from_name: impl Fn(&str) -> Option<T>,
    names: &[&str],
) -> syn::Result<(Ident, T)> {
    let ident: Ident = input.parse()?;
    match from_name(&ident.to_string()) {
        Some(v) => Ok((ident, v)),
        None => Err(syn::Error::new(
            ident.span(),
            format!("unknown {what} `{ident}`; expected one of: {}", names.join(", ")),
        )),
    }
}

fn parse_tensor(input: ParseStream, key: Ident, dtype_required: bool) -> syn::Result<TensorArg> {
    let dtype = if input.peek(Ident) {
        let ident: Ident = input.parse()?;
        match DType::from_name(&ident.to_string()) {
            Some(t) => Some((ident, t)),
            None => {
                let names: Vec<&str> = DType::ALL.iter().map(|t| t.name()).collect();
                return Err(syn::Error::new(
                    ident.span(),
                    format!("unknown element type `{ident}`; stridex knows {}", names.join(", ")),
                ));
            }
        }
    } else if dtype_required {
        return Err(
            input.error(format!("`{key}` needs an element type before its sizes, e.g. `{key}: f32[3, 2]`"))
        );
    } else {
        None
    };
    let sizes = parse_list(input, parse_uint)?;
    let strides = if input.peek(Ident)
        && input.fork().parse::<Ident>()? == "strides"
        && input.peek2(syn::token::Bracket)
    {
        input.parse::<Ident>()?;
        Some(parse_list(input, parse_uint)?)
    } else {
        None
    };
    Ok(TensorArg { key, dtype, sizes, strides })
}

fn parse_list<T>(input: ParseStream, item: fn(ParseStream) -> syn::Result<Lit<T>>) -> syn::Result<List<T>> {
    let content;
    let bracket = bracketed!(content in input);
    let mut items = Vec::new();
    while !content.is_empty() {
        items.push(item(&content)?);
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(List { items, span: bracket.span.join() })
}

fn parse_int(input: ParseStream) -> syn::Result<Lit<i64>> {
    let mut tokens = TokenStream::new();
    let negative = if input.peek(Token![-]) {
        input.parse::<Token![-]>()?.to_tokens(&mut tokens);
        true
    } else {
        false
    };
    let lit: LitInt = input.parse()?;
    lit.to_tokens(&mut tokens);
    let magnitude: i64 = lit.base10_parse()?;
    Ok(Lit { value: if negative { -magnitude } else { magnitude }, tokens })
}

fn parse_uint(input: ParseStream) -> syn::Result<Lit<usize>> {
    if input.peek(Token![-]) {
        return Err(input.error(
            "expected a non-negative integer here (sizes, strides, offsets and index_dims are unsigned)",
        ));
    }
    let lit: LitInt = input.parse()?;
    Ok(Lit { value: lit.base10_parse()?, tokens: lit.to_token_stream() })
}
