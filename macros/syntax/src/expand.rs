//! Writes the tokens of a validated descriptor: a `const` descriptor literal and the op built
//! from it, or, for a broken one, its errors. Nothing here checks a rule. The proc-macro crate
//! calls [`gather_macro`], [`slice_macro`] and [`chain_macro`] and converts tokens; these are
//! plain functions, so their output is tested here without a compiler (`tests/expand.rs`).

/// What `gather! { .. }` expands to, for the tokens between its braces.
pub fn gather_macro(tokens: TokenStream) -> TokenStream {
    let item = is_item(&tokens);
    match crate::gather(tokens) {
        Ok((input, desc)) => gather(&input, &desc),
        Err(err) => errors(err, item),
    }
}

/// What `gather_elements! { .. }` expands to.
pub fn gather_elements_macro(tokens: TokenStream) -> TokenStream {
    let item = is_item(&tokens);
    match crate::gather_elements(tokens) {
        Ok((input, desc)) => gather(&input, &desc),
        Err(err) => errors(err, item),
    }
}

/// What `gather_nd! { .. }` expands to.
pub fn gather_nd_macro(tokens: TokenStream) -> TokenStream {
    let item = is_item(&tokens);
    match crate::gather_nd(tokens) {
        Ok((input, desc)) => gather(&input, &desc),
        Err(err) => errors(err, item),
    }
}

/// What `scatter! { .. }` expands to.
pub fn scatter_macro(tokens: TokenStream) -> TokenStream {
    scatter_form_macro(tokens, GatherForm::Axis)
}

/// What `scatter_elements! { .. }` expands to.
pub fn scatter_elements_macro(tokens: TokenStream) -> TokenStream {
    scatter_form_macro(tokens, GatherForm::Elements)
}

/// What `scatter_nd! { .. }` expands to.
pub fn scatter_nd_macro(tokens: TokenStream) -> TokenStream {
    scatter_form_macro(tokens, GatherForm::Nd)
}

fn scatter_form_macro(tokens: TokenStream, form: GatherForm) -> TokenStream {
    let item = is_item(&tokens);
    match crate::scatter(tokens, form) {
        Ok((input, desc)) => scatter(&input, &desc),
        Err(err) => errors(err, item),
    }
}

/// What `slice! { .. }` expands to.
pub fn slice_macro(tokens: TokenStream) -> TokenStream {
    let item = is_item(&tokens);
    match crate::slice(tokens) {
        Ok((input, desc)) => slice(&input, &desc),
        Err(err) => errors(err, item),
    }
}

/// What `chain! { .. }` expands to.
pub fn chain_macro(tokens: TokenStream) -> TokenStream {
    let item = is_item(&tokens);
    match crate::chain(tokens) {
        Ok((input, desc)) => chain(&input, &desc),
        Err(err) => errors(err, item),
    }
}

/// Whether the macro defines an item (`static NAME; ..`) rather than an expression.
fn is_item(input: &TokenStream) -> bool {
    input.clone().into_iter().take(4).any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "static"))
}

/// The compile errors of a broken descriptor, as an item or inside a block expression.
fn errors(err: syn::Error, item: bool) -> TokenStream {
    let errors = err.to_compile_error();
    if item {
        errors
    } else {
        quote!({ #errors })
    }
}

use crate::{ChainInput, GatherInput, ItemHead, SliceInput};
use proc_macro2::TokenStream;
use quote::quote;
use stridex_core::{
    ChainCount, ChainDesc, DType, Dims, Duplicates, FeatureLevel, GatherDesc, GatherForm, GatherRules,
    OutOfRange, OutputDecl, Reduction, ScatterDesc, SignedDims, SliceDesc, SliceWindow, StageDesc,
    TensorDecl,
};

pub fn gather(input: &GatherInput, desc: &GatherDesc) -> TokenStream {
    let t = rust_type(desc.data.dtype);
    let i = rust_type(desc.indices.dtype);
    let rules = gather_rules(desc.rules);
    let data = tensor_decl(&desc.data);
    let indices = tensor_decl(&desc.indices);
    let axis = desc.axis;
    let batch_dims = option(desc.batch_dims.map(|b| quote!(#b)));
    let index_dims = option(desc.index_dims.map(|k| quote!(#k)));
    let out_of_range = option(desc.out_of_range.map(policy));
    let output = option(desc.output.as_ref().map(output_decl));
    let level = option(desc.feature_level.map(feature_level));
    let dynamic = desc.dynamic_leading;
    let form = gather_form(desc.form);
    let value = quote! {
        ::stridex::GatherOp::<#t, #i>::__from_checked(::stridex::__private::GatherDesc {
            form: #form,
            rules: #rules,
            data: #data,
            indices: #indices,
            axis: #axis,
            batch_dims: #batch_dims,
            index_dims: #index_dims,
            out_of_range: #out_of_range,
            output: #output,
            feature_level: #level,
            dynamic_leading: #dynamic,
        })
    };
    item_or_expr(&input.item, quote!(::stridex::GatherOp<#t, #i>), value)
}

pub fn scatter(input: &GatherInput, desc: &ScatterDesc) -> TokenStream {
    let t = rust_type(desc.map.data.dtype);
    let i = rust_type(desc.map.indices.dtype);
    let form = gather_form(desc.map.form);
    let rules = gather_rules(desc.map.rules);
    let (data, indices, updates) =
        (tensor_decl(&desc.map.data), tensor_decl(&desc.map.indices), tensor_decl(&desc.updates));
    let axis = desc.map.axis;
    let out_of_range = option(desc.map.out_of_range.map(policy));
    let dynamic = desc.map.dynamic_leading;
    let (reduction, duplicates, use_init_val) =
        scatter_policies(desc.reduction, desc.duplicates, desc.use_init_val);
    let value = quote! {
        ::stridex::ScatterOp::<#t, #i>::__from_checked(::stridex::__private::ScatterDesc {
            map: {
                let mut map = ::stridex::__private::GatherDesc::new(#rules, #data, #indices, #axis);
                map.form = #form;
                map.out_of_range = #out_of_range;
                map.dynamic_leading = #dynamic;
                map
            },
            updates: #updates,
            reduction: #reduction,
            duplicates: #duplicates,
            use_init_val: #use_init_val,
        })
    };
    item_or_expr(&input.item, quote!(::stridex::ScatterOp<#t, #i>), value)
}

/// A scatter's `reduction`, `duplicates` and `use_init_val`, each an `Option` literal.
fn scatter_policies(
    reduction: Option<Reduction>,
    duplicates: Option<Duplicates>,
    use_init_val: Option<bool>,
) -> (TokenStream, TokenStream, TokenStream) {
    let reduction = option(reduction.map(|r| {
        let r = quote::format_ident!("{}", format!("{r:?}"));
        quote!(::stridex::__private::Reduction::#r)
    }));
    let duplicates = option(duplicates.map(|d| {
        let d = quote::format_ident!("{}", format!("{d:?}"));
        quote!(::stridex::__private::Duplicates::#d)
    }));
    (reduction, duplicates, option(use_init_val.map(|v| quote!(#v))))
}

pub fn slice(input: &SliceInput, desc: &SliceDesc) -> TokenStream {
    let t = rust_type(desc.input.dtype);
    let tensor = tensor_decl(&desc.input);
    let window = slice_window(&desc.window);
    let output = option(desc.output.as_ref().map(output_decl));
    let level = option(desc.feature_level.map(feature_level));
    let dynamic = desc.dynamic_leading;
    let value = quote! {
        ::stridex::SliceOp::<#t>::__from_checked(::stridex::__private::SliceDesc {
            input: #tensor,
            window: #window,
            output: #output,
            feature_level: #level,
            dynamic_leading: #dynamic,
        })
    };
    item_or_expr(&input.item, quote!(::stridex::SliceOp<#t>), value)
}

pub fn chain(input: &ChainInput, desc: &ChainDesc) -> TokenStream {
    let t = rust_type(desc.data.dtype);
    let index_types: Vec<TokenStream> = desc.index_dtypes().into_iter().map(rust_type).collect();
    let data = tensor_decl(&desc.data);
    let stages = desc.stages.iter().map(|stage| match stage {
        StageDesc::Gather(g) => {
            let rules = gather_rules(g.rules);
            let indices = tensor_decl(&g.indices);
            let axis = g.axis;
            let batch_dims = option(g.batch_dims.map(|b| quote!(#b)));
            let index_dims = option(g.index_dims.map(|k| quote!(#k)));
            let out_of_range = option(g.out_of_range.map(policy));
            let form = gather_form(g.form);
            quote!(::stridex::__private::StageDesc::Gather(::stridex::__private::GatherStage {
                form: #form,
                rules: #rules,
                indices: #indices,
                axis: #axis,
                batch_dims: #batch_dims,
                index_dims: #index_dims,
                out_of_range: #out_of_range,
            }))
        }
        StageDesc::Slice(w) => {
            let window = slice_window(w);
            quote!(::stridex::__private::StageDesc::Slice(#window))
        }
        StageDesc::Convert(c) => {
            let to = dtype(c.to);
            let dim = c.dim;
            let (scale, offset) = (c.scale.bits(), c.offset.bits());
            quote!(::stridex::__private::StageDesc::Convert(::stridex::__private::ConvertStage {
                to: #to,
                dim: #dim,
                scale: ::stridex::__private::Channels::from_bits(&[#(#scale),*]),
                offset: ::stridex::__private::Channels::from_bits(&[#(#offset),*]),
            }))
        }
        StageDesc::Scatter(s) => {
            let (form, rules) = (gather_form(s.form), gather_rules(s.rules));
            let (into, indices, axis) = (tensor_decl(&s.into), tensor_decl(&s.indices), s.axis);
            let out_of_range = option(s.out_of_range.map(policy));
            let (reduction, duplicates, use_init_val) =
                scatter_policies(s.reduction, s.duplicates, s.use_init_val);
            quote!(::stridex::__private::StageDesc::Scatter(::stridex::__private::ScatterStage {
                form: #form,
                rules: #rules,
                into: #into,
                indices: #indices,
                axis: #axis,
                reduction: #reduction,
                duplicates: #duplicates,
                use_init_val: #use_init_val,
                out_of_range: #out_of_range,
            }))
        }
    });
    let o = rust_type(match desc.stages.last() {
        Some(StageDesc::Convert(c)) => c.to,
        _ => desc.data.dtype,
    });
    let output = option(desc.output.as_ref().map(output_decl));
    let count = option(desc.dynamic_leading.map(|c| match c {
        ChainCount::Data => quote!(::stridex::__private::ChainCount::Data),
        ChainCount::Indices { stage } => quote!(::stridex::__private::ChainCount::Indices { stage: #stage }),
    }));
    let ty = quote!(::stridex::ChainOp<#t, (#(#index_types,)*), #o>);
    // The stages live in a `const`, so the descriptor borrows them for 'static in an expression
    // as in a `static` item.
    let value = quote! {{
        const STAGES: &[::stridex::__private::StageDesc] = &[#(#stages),*];
        <#ty>::__from_checked(::stridex::__private::ChainDesc {
            data: #data,
            stages: ::stridex::__private::Cow::Borrowed(STAGES),
            output: #output,
            dynamic_leading: #count,
        })
    }};
    item_or_expr(&input.item, ty, value)
}

fn feature_level(level: FeatureLevel) -> TokenStream {
    let name = syn::Ident::new(&format!("{level:?}"), proc_macro2::Span::call_site());
    quote!(::stridex::__private::FeatureLevel::#name)
}

fn gather_form(form: GatherForm) -> TokenStream {
    match form {
        GatherForm::Axis => quote!(::stridex::__private::GatherForm::Axis),
        GatherForm::Elements => quote!(::stridex::__private::GatherForm::Elements),
        GatherForm::Nd => quote!(::stridex::__private::GatherForm::Nd),
    }
}

fn gather_rules(rules: GatherRules) -> TokenStream {
    match rules {
        GatherRules::Onnx => quote!(::stridex::__private::GatherRules::Onnx),
        GatherRules::OpenVino => quote!(::stridex::__private::GatherRules::OpenVino),
        GatherRules::DirectMl => quote!(::stridex::__private::GatherRules::DirectMl),
    }
}

fn slice_window(window: &SliceWindow) -> TokenStream {
    match window {
        SliceWindow::DirectMl { offsets, sizes, strides } => {
            let (o, s, st) = (dims(offsets), dims(sizes), signed(strides));
            quote!(::stridex::__private::SliceWindow::DirectMl { offsets: #o, sizes: #s, strides: #st })
        }
        SliceWindow::Onnx { starts, ends, axes, steps } => {
            let (s, e) = (signed(starts), signed(ends));
            let a = option(axes.as_ref().map(signed));
            let st = option(steps.as_ref().map(signed));
            quote!(::stridex::__private::SliceWindow::Onnx { starts: #s, ends: #e, axes: #a, steps: #st })
        }
    }
}

/// `static NAME: Type = value;` for the item form, else the value as an expression.
fn item_or_expr(item: &Option<ItemHead>, ty: TokenStream, value: TokenStream) -> TokenStream {
    match item {
        Some(ItemHead { vis, static_token, name }) => quote!(#vis #static_token #name: #ty = #value;),
        None => value,
    }
}

fn rust_type(t: DType) -> TokenStream {
    match t {
        DType::F64 => quote!(f64),
        DType::F32 => quote!(f32),
        DType::F16 => quote!(::stridex::half::f16),
        DType::BF16 => quote!(::stridex::half::bf16),
        DType::I64 => quote!(i64),
        DType::I32 => quote!(i32),
        DType::I16 => quote!(i16),
        DType::I8 => quote!(i8),
        DType::U64 => quote!(u64),
        DType::U32 => quote!(u32),
        DType::U16 => quote!(u16),
        DType::U8 => quote!(u8),
        DType::Bool => quote!(bool),
    }
}

fn dtype(t: DType) -> TokenStream {
    let name = syn::Ident::new(&format!("{t:?}"), proc_macro2::Span::call_site());
    quote!(::stridex::__private::DType::#name)
}

fn dims(d: &Dims) -> TokenStream {
    let v = d.iter();
    quote!(::stridex::__private::Dims::of(&[#(#v),*]))
}

fn signed(d: &SignedDims) -> TokenStream {
    let v = d.iter();
    quote!(::stridex::__private::SignedDims::of(&[#(#v),*]))
}

fn option(v: Option<TokenStream>) -> TokenStream {
    match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

fn policy(p: OutOfRange) -> TokenStream {
    match p {
        OutOfRange::Error => quote!(::stridex::__private::OutOfRange::Error),
        OutOfRange::Zero => quote!(::stridex::__private::OutOfRange::Zero),
        OutOfRange::Clamp => quote!(::stridex::__private::OutOfRange::Clamp),
        OutOfRange::Skip => quote!(::stridex::__private::OutOfRange::Skip),
    }
}

fn tensor_decl(t: &TensorDecl) -> TokenStream {
    let (d, s, st) = (dtype(t.dtype), dims(&t.sizes), option(t.strides.as_ref().map(dims)));
    quote!(::stridex::__private::TensorDecl { dtype: #d, sizes: #s, strides: #st })
}

fn output_decl(o: &OutputDecl) -> TokenStream {
    let (d, s, st) = (option(o.dtype.map(dtype)), dims(&o.sizes), option(o.strides.as_ref().map(dims)));
    quote!(::stridex::__private::OutputDecl { dtype: #d, sizes: #s, strides: #st })
}
