//! Tokens to a typed descriptor. Nothing here knows a rule (docs/rules.md): it checks only the
//! shape of the input (keys, literals, element type names) and keeps every token for spans.
//! Independent mistakes (unknown or repeated keys, unknown names, malformed values) are all
//! collected; a value that fails to parse is skipped up to the next `,`.

use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use stridex_core::keys;
use stridex_core::SliceForm;
use stridex_core::{
    DType, Duplicates, FeatureLevel, GatherForm, GatherRules, OutOfRange, Reduction, SliceRange,
};
use syn::parse::{Parse, ParseStream};
use syn::{bracketed, Ident, LitFloat, LitInt, Token, Visibility};

/// A literal value and the tokens it came from (`-2` is two tokens).
#[derive(Clone, Debug)]
pub struct Lit<T> {
    pub value: T,
    pub tokens: TokenStream,
}

/// A bracketed list `[a, b, c]`, with the span of the brackets.
#[derive(Clone, Debug)]
pub struct List<T> {
    pub items: Vec<Lit<T>>,
    pub span: Span,
}

impl<T: Copy> List<T> {
    pub fn values(&self) -> Vec<T> {
        self.items.iter().map(|l| l.value).collect()
    }
}

impl List<usize> {
    /// Positions written `_` (a size known at run time; its value here is a placeholder).
    pub fn underscores(&self) -> Vec<usize> {
        (0..self.items.len()).filter(|&i| self.items[i].tokens.to_string() == "_").collect()
    }
}

/// `f32[3, 2]`, `i64[]`, `f32[2, 3] strides [1, 2]`; for outputs the type may be left out.
#[derive(Clone, Debug)]
pub struct TensorArg {
    pub key: Ident,
    pub dtype: Option<(Ident, DType)>,
    pub sizes: List<usize>,
    pub strides: Option<List<usize>>,
}

/// `static NAME;` or `pub static NAME;` before the keys: the item form.
#[derive(Clone)]
pub struct ItemHead {
    pub vis: Visibility,
    pub static_token: Token![static],
    pub name: Ident,
}

pub struct GatherInput {
    /// `gather!`, `gather_elements!` or `gather_nd!` (or a chain stage of that name).
    pub form: GatherForm,
    pub item: Option<ItemHead>,
    pub rules: Option<(Ident, GatherRules)>,
    pub data: TensorArg,
    pub indices: TensorArg,
    pub axis: Option<Lit<i64>>,
    pub batch_dims: Option<Lit<i64>>,
    pub index_dims: Option<Lit<usize>>,
    pub out_of_range: Option<(Ident, OutOfRange)>,
    pub output: Option<TensorArg>,
    pub feature_level: Option<Lit<FeatureLevel>>,
    /// `scatter!`, `scatter_elements!` or `scatter_nd!`: the gather of this form is the map,
    /// and the keys below are the scatter's own.
    pub scatter: bool,
    pub updates: Option<TensorArg>,
    pub reduction: Option<(Ident, Reduction)>,
    pub duplicates: Option<(Ident, Duplicates)>,
    pub use_init_val: Option<Lit<bool>>,
}

pub struct SliceInput {
    pub item: Option<ItemHead>,
    pub rules: Option<(Ident, SliceForm)>,
    pub input: TensorArg,
    pub offsets: Option<List<usize>>,
    pub sizes: Option<List<usize>>,
    pub strides: Option<List<i64>>,
    pub starts: Option<List<i64>>,
    pub ends: Option<List<i64>>,
    pub axes: Option<List<i64>>,
    pub steps: Option<List<i64>>,
    pub output: Option<TensorArg>,
    pub feature_level: Option<Lit<FeatureLevel>>,
    /// `s[.., 1..9;2, ..;-1]`: ndarray/Burn-style ranges standing for a SLICE1 window.
    pub ranges: Option<RangesArg>,
}

/// `s[..]`: the `s`, the brackets' span, and one item per range.
#[derive(Clone, Debug)]
pub struct RangesArg {
    pub s: Ident,
    pub span: Span,
    pub items: Vec<Lit<RangeItem>>,
}

/// A range as written, or a lone index (which the rules refuse, with a hint).
#[derive(Clone, Copy, Debug)]
pub enum RangeItem {
    Range(SliceRange),
    Index(i64),
}

/// `chain! { data: .., gather { .. }, slice { .. }, .., output: .. }`.
pub struct ChainInput {
    pub item: Option<ItemHead>,
    pub data: TensorArg,
    pub stages: Vec<StageInput>,
    pub output: Option<TensorArg>,
}

/// A stage: its keyword (`gather`, `slice`) and its keys. The stage's input, which the keys do
/// not give, is the chain's `data` for the first stage and, for the others, stands on the
/// keyword (so a rule about it points there).
pub enum StageInput {
    Gather {
        keyword: Ident,
        input: Box<GatherInput>,
    },
    /// The last stage: `input.updates` is what it receives (standing on the keyword), and
    /// `input.data` the destination, written `into`.
    Scatter {
        keyword: Ident,
        input: Box<GatherInput>,
    },
    Slice {
        keyword: Ident,
        input: Box<SliceInput>,
    },
    Convert {
        keyword: Ident,
        input: ConvertInput,
    },
}

impl StageInput {
    pub fn keyword(&self) -> &Ident {
        match self {
            StageInput::Gather { keyword, .. }
            | StageInput::Scatter { keyword, .. }
            | StageInput::Slice { keyword, .. }
            | StageInput::Convert { keyword, .. } => keyword,
        }
    }
}

/// `convert { to: f32, dim: 1, scale: [..], offset: [..] }`: the last stage of a chain.
pub struct ConvertInput {
    pub to: (Ident, DType),
    pub dim: Option<Lit<i64>>,
    pub scale: Option<List<f32>>,
    pub offset: Option<List<f32>>,
}

impl SliceInput {
    pub fn form(&self) -> SliceForm {
        self.rules.as_ref().map_or(SliceForm::DirectMl, |r| r.1)
    }
}

impl Parse for GatherInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        parse_gather(input, GatherForm::Axis)
    }
}

/// The keys of `gather!` (`form` Axis), `gather_elements!` (Elements) or `gather_nd!` (Nd).
pub fn parse_gather(input: ParseStream, form: GatherForm) -> syn::Result<GatherInput> {
    let cx = Ctxt::default();
    let parsed = parse_item_head(input).map(|item| gather_keys(input, &cx, item, None, form, false));
    Ok(cx.finish(parsed)?.expect("an error was recorded"))
}

/// The keys of `scatter!` (`form` Axis), `scatter_elements!` (Elements) or `scatter_nd!` (Nd).
pub fn parse_scatter(input: ParseStream, form: GatherForm) -> syn::Result<GatherInput> {
    let cx = Ctxt::default();
    let parsed = parse_item_head(input).map(|item| gather_keys(input, &cx, item, None, form, true));
    Ok(cx.finish(parsed)?.expect("an error was recorded"))
}

/// The keys of a gather: `gather!`'s, or (`stage` is its input) a chain stage's, which takes no
/// `data` and no `output`. `None` once a mistake is recorded in `cx`.
fn gather_keys(
    input: ParseStream,
    cx: &Ctxt,
    item: Option<ItemHead>,
    stage: Option<TensorArg>,
    form: GatherForm,
    scatter: bool,
) -> Option<GatherInput> {
    let all = input.fork().parse::<TokenStream>().unwrap_or_default();
    let (name, known) = match (form, stage.is_some()) {
        (GatherForm::Nd, true) if scatter => ("a scatter_nd stage", keys::SCATTER_ND_STAGE_KEYS),
        (GatherForm::Elements, true) if scatter => ("a scatter_elements stage", keys::SCATTER_STAGE_KEYS),
        (GatherForm::Axis, true) if scatter => ("a scatter stage", keys::SCATTER_STAGE_KEYS),
        (GatherForm::Nd, _) if scatter => ("scatter_nd!", keys::SCATTER_ND_KEYS),
        (_, _) if scatter => (form.scatter_macro_name(), keys::SCATTER_KEYS),
        (GatherForm::Axis, true) => ("a gather stage", keys::GATHER_KEYS),
        (GatherForm::Axis, false) => ("gather!", keys::GATHER_KEYS),
        (GatherForm::Elements, true) => ("a gather_elements stage", keys::GATHER_ELEMENTS_KEYS),
        (GatherForm::Elements, false) => ("gather_elements!", keys::GATHER_ELEMENTS_KEYS),
        (GatherForm::Nd, true) => ("a gather_nd stage", keys::GATHER_ND_KEYS),
        (GatherForm::Nd, false) => ("gather_nd!", keys::GATHER_ND_KEYS),
    };
    let mut keys = Keys::new(name, known);
    keys.stage = stage.is_some();
    // A scatter stage receives its updates; a gather stage its data.
    let scatter_stage = scatter && stage.is_some();
    let (mut updates, stage) = if scatter_stage { (stage, None) } else { (None, stage) };
    let (mut rules, mut data, mut indices, mut axis) = (None, stage, None, None);
    let (mut batch_dims, mut index_dims, mut out_of_range, mut output) = (None, None, None, None);
    let (mut feature_level, mut reduction, mut duplicates) = (None, None, None);
    let mut use_init_val = None;
    while !input.is_empty() {
        let Some(key) = keys.next(input, cx) else { continue };
        let parsed = match key.to_string().as_str() {
            "rules" => parse_keyword(input, "rule set", GatherRules::from_name, &keys::gather_rule_names())
                .map(|v| rules = Some(v)),
            "data" | "into" => parse_tensor(input, key, true, cx).map(|v| data = Some(v)),
            "indices" => parse_tensor(input, key, true, cx).map(|v| indices = Some(v)),
            "axis" => parse_int(input).map(|v| axis = Some(v)),
            "batch_dims" => parse_int(input).map(|v| batch_dims = Some(v)),
            "index_dims" => parse_uint(input).map(|v| index_dims = Some(v)),
            "out_of_range" => parse_keyword(
                input,
                "out-of-range policy",
                OutOfRange::from_name,
                &["error", "zero", "clamp", "skip"],
            )
            .map(|v| out_of_range = Some(v)),
            "updates" => parse_tensor(input, key, true, cx).map(|v| updates = Some(v)),
            "reduction" => parse_keyword(input, "reduction", Reduction::from_name, &Reduction::NAMES)
                .map(|v| reduction = Some(v)),
            "duplicates" => {
                parse_keyword(input, "duplicates policy", Duplicates::from_name, &Duplicates::NAMES)
                    .map(|v| duplicates = Some(v))
            }
            "use_init_val" => parse_bool(input).map(|v| use_init_val = Some(v)),
            "output" => parse_tensor(input, key, false, cx).map(|v| output = Some(v)),
            "feature_level" => parse_feature_level(input).map(|v| feature_level = Some(v)),
            _ => unreachable!("Keys::next accepts known keys only"),
        };
        end_of_entry(input, parsed, cx);
    }
    let data = match scatter_stage {
        true => keys.require(data, "into", "into: f32[64, 8]", &all, cx),
        false => keys.require(data, "data", "data: f32[3, 2]", &all, cx),
    };
    let indices = keys.require(indices, "indices", "indices: i64[2, 2]", &all, cx);
    let updates =
        if scatter { keys.require(updates, "updates", "updates: f32[2, 2]", &all, cx) } else { None };
    if cx.has_errors() {
        return None;
    }
    Some(GatherInput {
        form,
        item,
        rules,
        data: data?,
        indices: indices?,
        axis,
        batch_dims,
        index_dims,
        out_of_range,
        output,
        feature_level,
        scatter,
        updates,
        reduction,
        duplicates,
        use_init_val,
    })
}

impl Parse for SliceInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let cx = Ctxt::default();
        let parsed = parse_item_head(input).map(|item| slice_keys(input, &cx, item, None));
        Ok(cx.finish(parsed)?.expect("an error was recorded"))
    }
}

/// The keys of a slice: `slice!`'s, or (`stage` is its input) a chain stage's, which takes no
/// `input` and no `output`. `None` once a mistake is recorded in `cx`.
fn slice_keys(
    input: ParseStream,
    cx: &Ctxt,
    item: Option<ItemHead>,
    stage: Option<TensorArg>,
) -> Option<SliceInput> {
    let all = input.fork().parse::<TokenStream>().unwrap_or_default();
    let mut keys = Keys::new(if stage.is_some() { "a slice stage" } else { "slice!" }, keys::SLICE_KEYS);
    keys.stage = stage.is_some();
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
        feature_level: None,
        ranges: None,
    };
    let mut tensor = stage;
    // Set even when the ranges fail to parse, so their mistake is not followed by "missing
    // `offsets`".
    let mut saw_ranges = false;
    while !input.is_empty() {
        if input.peek(Ident)
            && input.peek2(syn::token::Bracket)
            && input.fork().parse::<Ident>().is_ok_and(|i| i == "s")
        {
            saw_ranges = true;
            let parsed = parse_ranges(input).map(|r| s.ranges = Some(r));
            end_of_entry(input, parsed, cx);
            continue;
        }
        let Some(key) = keys.next(input, cx) else { continue };
        let parsed = match key.to_string().as_str() {
            "rules" => parse_keyword(input, "slice rule set", SliceForm::from_name, &SliceForm::NAMES)
                .map(|v| s.rules = Some(v)),
            "input" => parse_tensor(input, key, true, cx).map(|v| tensor = Some(v)),
            "offsets" => parse_list(input, parse_uint).map(|v| s.offsets = Some(v)),
            "sizes" => parse_list(input, parse_size).map(|v| s.sizes = Some(v)),
            "strides" => parse_list(input, parse_int).map(|v| s.strides = Some(v)),
            "starts" => parse_list(input, parse_int).map(|v| s.starts = Some(v)),
            "ends" => parse_list(input, parse_int).map(|v| s.ends = Some(v)),
            "axes" => parse_list(input, parse_int).map(|v| s.axes = Some(v)),
            "steps" => parse_list(input, parse_int).map(|v| s.steps = Some(v)),
            "output" => parse_tensor(input, key, false, cx).map(|v| s.output = Some(v)),
            "feature_level" => parse_feature_level(input).map(|v| s.feature_level = Some(v)),
            _ => unreachable!("Keys::next accepts known keys only"),
        };
        end_of_entry(input, parsed, cx);
    }
    let tensor = keys.require(tensor, "input", "input: f32[1, 1, 4, 4]", &all, cx);
    // Which window keys belong to which form is a rule of `core`, shared with the builders.
    let form = s.form();
    for key in &keys.seen {
        if let Err(e) = form.check_key(&key.to_string()) {
            cx.error(syn::Error::new(key.span(), e.to_string()));
        }
    }
    if let Some(r) = &s.ranges {
        let mut given: Vec<String> = keys.seen.iter().map(ToString::to_string).collect();
        if s.rules.is_some() {
            given.push("rules".into());
        }
        let given: Vec<&str> = given.iter().map(String::as_str).collect();
        if let Err(e) = keys::check_ranges(form, &given) {
            cx.error(syn::Error::new(r.s.span(), e.to_string()));
        }
    } else if !saw_ranges {
        for &k in form.required() {
            if !keys.seen.iter().any(|i| i == k) {
                cx.error(keys.missing(k, form.example(), &all));
            }
        }
    }
    if cx.has_errors() {
        return None;
    }
    s.input = tensor?;
    Some(s)
}

impl Parse for ChainInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let cx = Ctxt::default();
        let parsed = chain_entries(input, &cx);
        Ok(cx.finish(parsed)?.expect("an error was recorded"))
    }
}

/// A chain's entries; `None` once a mistake is recorded in `cx`.
fn chain_entries(input: ParseStream, cx: &Ctxt) -> syn::Result<Option<ChainInput>> {
    let item = parse_item_head(input)?;
    let all = input.fork().parse::<TokenStream>()?;
    let (mut data, mut stages, mut output) = (None::<TensorArg>, Vec::new(), None::<TensorArg>);
    while !input.is_empty() {
        let Ok(key) = input.fork().parse::<Ident>() else {
            cx.error(input.error(
                "expected `data: T[..]`, `gather { .. }`, `gather_elements { .. }`, `slice { .. }`, `convert { .. }`, `scatter { .. }` or `output: [..]`",
            ));
            skip_entry(input);
            continue;
        };
        let name = key.to_string();
        let order = |what: &str| syn::Error::new(key.span(), what);
        let parsed = match name.as_str() {
                "data" | "output" => {
                    input.parse::<Ident>()?;
                    match input.parse::<Token![:]>() {
                        Err(e) => Err(e),
                        Ok(_) if name == "data" => {
                            if data.is_some() {
                                cx.error(order("key `data` is given twice; keep one"));
                            } else if !stages.is_empty() {
                                cx.error(order("`data` comes first in a chain, before its stages"));
                            }
                            parse_tensor(input, key.clone(), true, cx).map(|t| data = data.take().or(Some(t)))
                        }
                        Ok(_) => {
                            if output.is_some() {
                                cx.error(order("key `output` is given twice; keep one"));
                            }
                            parse_tensor(input, key.clone(), false, cx).map(|t| output = Some(t))
                        }
                    }
                }
                "gather" | "gather_elements" | "gather_nd" | "slice" | "convert" | "scatter" | "scatter_elements"
                | "scatter_nd"
                    if input.peek2(syn::token::Brace) =>
                {
                    input.parse::<Ident>()?;
                    if output.is_some() {
                        cx.error(order("`output` comes last in a chain, after its stages; move this stage before it"));
                    }
                    let content;
                    syn::braced!(content in input);
                    // The first stage's input is the chain's data; a later one's stands on its keyword.
                    let stage_input = match (&data, stages.is_empty()) {
                        (Some(d), true) => d.clone(),
                        _ => TensorArg {
                            key: key.clone(),
                            dtype: None,
                            sizes: List { items: vec![], span: key.span() },
                            strides: None,
                        },
                    };
                    let stage = if name.starts_with("gather") {
                        let form = match name.as_str() {
                            "gather" => GatherForm::Axis,
                            "gather_elements" => GatherForm::Elements,
                            _ => GatherForm::Nd,
                        };
                        gather_keys(&content, cx, None, Some(stage_input), form, false)
                            .map(|input| StageInput::Gather { keyword: key.clone(), input: Box::new(input) })
                    } else if let Some(form) = name.strip_prefix("scatter").map(|f| match f {
                        "" => GatherForm::Axis,
                        "_elements" => GatherForm::Elements,
                        _ => GatherForm::Nd,
                    }) {
                        gather_keys(&content, cx, None, Some(stage_input), form, true)
                            .map(|input| StageInput::Scatter { keyword: key.clone(), input: Box::new(input) })
                    } else if name == "convert" {
                        convert_keys(&content, cx).map(|input| StageInput::Convert { keyword: key.clone(), input })
                    } else {
                        slice_keys(&content, cx, None, Some(stage_input))
                            .map(|input| StageInput::Slice { keyword: key.clone(), input: Box::new(input) })
                    };
                    // A stage with a mistake is recorded in `cx` and left out.
                    stages.extend(stage);
                    Ok(())
                }
                _ => Err(order(&format!(
                    "unexpected `{name}` in chain!: a chain is `data: T[..]`, then stages `gather {{ .. }}`, `gather_elements {{ .. }}`, `gather_nd {{ .. }}` or `slice {{ .. }}` (the last may be `convert {{ .. }}` or `scatter {{ .. }}`, `scatter_elements {{ .. }}`, `scatter_nd {{ .. }}`), then an optional `output: [..]`"
                ))),
            };
        end_of_entry(input, parsed, cx);
    }
    if data.is_none() {
        let message = "chain! is missing the key `data`; start the chain with it, e.g. `data: f32[100, 16]`";
        cx.error(if all.is_empty() {
            syn::Error::new(Span::call_site(), message)
        } else {
            syn::Error::new_spanned(&all, message)
        });
    }
    Ok(match data {
        Some(data) if !cx.has_errors() => Some(ChainInput { item, data, stages, output }),
        _ => None,
    })
}

/// The keys of a `convert` stage. `None` once a mistake is recorded in `cx`.
fn convert_keys(input: ParseStream, cx: &Ctxt) -> Option<ConvertInput> {
    let all = input.fork().parse::<TokenStream>().unwrap_or_default();
    let mut keys = Keys::new("a convert stage", keys::CONVERT_KEYS);
    let (mut to, mut dim, mut scale, mut offset) = (None, None, None, None);
    while !input.is_empty() {
        let Some(key) = keys.next(input, cx) else { continue };
        let parsed = match key.to_string().as_str() {
            "to" => {
                let names: Vec<&str> = DType::ALL.iter().map(|t| t.name()).collect();
                parse_keyword(input, "element type", DType::from_name, &names).map(|v| to = Some(v))
            }
            "dim" => parse_int(input).map(|v| dim = Some(v)),
            "scale" => parse_list(input, parse_f32).map(|v| scale = Some(v)),
            "offset" => parse_list(input, parse_f32).map(|v| offset = Some(v)),
            _ => unreachable!("Keys::next accepts known keys only"),
        };
        end_of_entry(input, parsed, cx);
    }
    let to = keys.require(to, "to", "to: f32", &all, cx);
    if cx.has_errors() {
        return None;
    }
    Some(ConvertInput { to: to?, dim, scale, offset })
}

/// Tracks which keys were given: unknown and repeated keys are errors on the key itself.
struct Keys {
    macro_name: &'static str,
    known: &'static [&'static str],
    /// A chain stage's keys: those of the single op but its input and output.
    stage: bool,
    seen: Vec<Ident>,
    /// Known keys that an unknown one was taken for (`dat` for `data`): not reported missing.
    suggested: Vec<&'static str>,
}

impl Keys {
    fn new(macro_name: &'static str, known: &'static [&'static str]) -> Keys {
        Keys { macro_name, known, stage: false, seen: Vec::new(), suggested: Vec::new() }
    }

    /// Reads `key:`. An unknown, repeated or malformed key is reported and its entry skipped
    /// (`None`).
    fn next(&mut self, input: ParseStream, cx: &Ctxt) -> Option<Ident> {
        let key = match input.parse::<Ident>() {
            Ok(key) => key,
            Err(e) => {
                cx.error(e);
                skip_entry(input);
                return None;
            }
        };
        let name = key.to_string();
        let listed: Vec<&str> =
            self.known.iter().copied().filter(|k| !self.stage || keys::check_stage_key(k).is_ok()).collect();
        let fault = if !self.known.contains(&name.as_str()) {
            let near = closest(&name, &listed);
            self.suggested.extend(near);
            let hint = near.map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
            Some(format!(
                "unknown key `{name}` in {}; {hint}known keys: {}",
                self.macro_name,
                listed.join(", ")
            ))
        } else if let Some(e) = self.stage.then(|| keys::check_stage_key(&name).err()).flatten() {
            Some(e.to_string())
        } else if self.seen.iter().any(|k| *k == name) {
            Some(format!("key `{name}` is given twice; keep one"))
        } else {
            None
        };
        if let Some(message) = fault {
            cx.error(syn::Error::new(key.span(), message));
            skip_entry(input);
            return None;
        }
        if let Err(e) = input.parse::<Token![:]>() {
            cx.error(e);
            skip_entry(input);
            return None;
        }
        self.seen.push(key.clone());
        Some(key)
    }

    fn require<T>(
        &self,
        value: Option<T>,
        key: &str,
        example: &str,
        all: &TokenStream,
        cx: &Ctxt,
    ) -> Option<T> {
        if value.is_none() && !self.seen.iter().any(|k| k == key) && !self.suggested.contains(&key) {
            cx.error(self.missing(key, example, all));
        }
        value
    }

    /// A required key is absent: the error covers the macro's whole input (the tokens between
    /// its braces), so it points into the user's code rather than at the macro call.
    fn missing(&self, key: &str, example: &str, all: &TokenStream) -> syn::Error {
        let message = format!("{} is missing the key `{key}`; add it, e.g. `{example}`", self.macro_name);
        if all.is_empty() {
            syn::Error::new(Span::call_site(), message)
        } else {
            syn::Error::new_spanned(all, message)
        }
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

/// Skips the rest of an entry: every token up to and including the next top-level `,`.
fn skip_entry(input: ParseStream) {
    while !input.is_empty() && !input.peek(Token![,]) {
        if input.parse::<TokenTree>().is_err() {
            return;
        }
    }
    let _ = input.parse::<Option<Token![,]>>();
}

/// After a value: its parse error (if any) is recorded, then the entry must end at `,` or the
/// end of the input.
fn end_of_entry(input: ParseStream, parsed: syn::Result<()>, cx: &Ctxt) {
    match parsed {
        Err(e) => {
            cx.error(e);
            skip_entry(input);
        }
        Ok(()) if input.is_empty() => {}
        Ok(()) => {
            if let Err(e) = input.parse::<Token![,]>() {
                cx.error(e);
                skip_entry(input);
            }
        }
    }
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

/// A tensor: an unknown element type is recorded and the sizes are still read, so mistakes in
/// them are reported too.
fn parse_tensor(input: ParseStream, key: Ident, dtype_required: bool, cx: &Ctxt) -> syn::Result<TensorArg> {
    let dtype = if input.peek(Ident) {
        let ident: Ident = input.parse()?;
        match DType::from_name(&ident.to_string()) {
            Some(t) => Some((ident, t)),
            None => {
                let names: Vec<&str> = DType::ALL.iter().map(|t| t.name()).collect();
                cx.error(syn::Error::new(
                    ident.span(),
                    format!("unknown element type `{ident}`; stridex knows {}", names.join(", ")),
                ));
                None
            }
        }
    } else if dtype_required {
        return Err(
            input.error(format!("`{key}` needs an element type before its sizes, e.g. `{key}: f32[3, 2]`"))
        );
    } else {
        None
    };
    let sizes = parse_list(input, parse_size)?;
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

/// `s[.., 1..9;2, ..;-1, 2..=4, 3]`.
fn parse_ranges(input: ParseStream) -> syn::Result<RangesArg> {
    let s: Ident = input.parse()?;
    let content;
    let bracket = bracketed!(content in input);
    let mut items = Vec::new();
    while !content.is_empty() {
        items.push(parse_range(&content)?);
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(RangesArg { s, span: bracket.span.join(), items })
}

fn parse_range(input: ParseStream) -> syn::Result<Lit<RangeItem>> {
    let mut tokens = TokenStream::new();
    let bound = |input: ParseStream, tokens: &mut TokenStream| -> syn::Result<Option<i64>> {
        if input.peek(Token![-]) || input.peek(LitInt) {
            let l = parse_int(input)?;
            tokens.extend(l.tokens);
            Ok(Some(l.value))
        } else {
            Ok(None)
        }
    };
    let start = bound(input, &mut tokens)?;
    let mut range = if input.peek(Token![..=]) {
        input.parse::<Token![..=]>()?.to_tokens(&mut tokens);
        let Some(end) = bound(input, &mut tokens)? else {
            return Err(input.error("`..=` needs an end: `a..=b`"));
        };
        SliceRange { start, end: Some(end), inclusive: true, step: 1 }
    } else if input.peek(Token![..]) {
        input.parse::<Token![..]>()?.to_tokens(&mut tokens);
        SliceRange { start, end: bound(input, &mut tokens)?, inclusive: false, step: 1 }
    } else if let Some(index) = start {
        return Ok(Lit { value: RangeItem::Index(index), tokens });
    } else {
        return Err(
            input.error("expected a range: `..`, `a..`, `..b`, `a..b` or `a..=b`, with an optional `;step`")
        );
    };
    if input.peek(Token![;]) {
        input.parse::<Token![;]>()?.to_tokens(&mut tokens);
        let step = parse_int(input)?;
        tokens.extend(step.tokens);
        range.step = step.value;
    }
    Ok(Lit { value: RangeItem::Range(range), tokens })
}

/// `2_1`: an integer literal whose digits, as written, name a DirectML feature level.
fn parse_feature_level(input: ParseStream) -> syn::Result<Lit<FeatureLevel>> {
    let lit: LitInt = input.parse()?;
    match FeatureLevel::from_name(&lit.to_string()) {
        Some(level) => Ok(Lit { value: level, tokens: lit.to_token_stream() }),
        None => Err(syn::Error::new(
            lit.span(),
            format!(
                "unknown DirectML feature level `{lit}`; expected one of: {} (DML_FEATURE_LEVEL_1_0 .. 4_1)",
                FeatureLevel::NAMES.join(", ")
            ),
        )),
    }
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
    let value = if negative { magnitude.checked_neg() } else { Some(magnitude) };
    let value =
        value.ok_or_else(|| syn::Error::new_spanned(&tokens, "number too large to fit in target type"))?;
    Ok(Lit { value, tokens })
}

/// An f32 value: a float or integer literal, optionally negative (one past f32's range is
/// infinite here, which the rules refuse on its token).
fn parse_f32(input: ParseStream) -> syn::Result<Lit<f32>> {
    let mut tokens = TokenStream::new();
    let negative = input.peek(Token![-]);
    if negative {
        input.parse::<Token![-]>()?.to_tokens(&mut tokens);
    }
    let magnitude: f32 = if input.peek(LitFloat) {
        let lit: LitFloat = input.parse()?;
        lit.to_tokens(&mut tokens);
        lit.base10_parse()?
    } else {
        let lit: LitInt = input.parse()?;
        lit.to_tokens(&mut tokens);
        lit.base10_parse()?
    };
    Ok(Lit { value: if negative { -magnitude } else { magnitude }, tokens })
}

/// A size: an unsigned integer, or `_` (known at run time; the rules decide where it may stand).
fn parse_size(input: ParseStream) -> syn::Result<Lit<usize>> {
    if input.peek(Token![_]) {
        let underscore: Token![_] = input.parse()?;
        return Ok(Lit { value: stridex_core::dynamic::PLACEHOLDER, tokens: underscore.to_token_stream() });
    }
    parse_uint(input)
}

fn parse_bool(input: ParseStream) -> syn::Result<Lit<bool>> {
    let lit: syn::LitBool =
        input.parse().map_err(|e| syn::Error::new(e.span(), "expected `true` or `false` here"))?;
    Ok(Lit { value: lit.value, tokens: lit.to_token_stream() })
}

fn parse_uint(input: ParseStream) -> syn::Result<Lit<usize>> {
    if input.peek(Token![-]) {
        return Err(input.error(
            "expected a non-negative integer here (tensor sizes and strides, window offsets and sizes, and index_dims are unsigned)",
        ));
    }
    let lit: LitInt = input.parse()?;
    Ok(Lit { value: lit.base10_parse()?, tokens: lit.to_token_stream() })
}
