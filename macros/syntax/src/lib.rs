//! The descriptor front end of stridex: the key language of `gather!`, `gather_elements!`,
//! `gather_nd!`, `slice!`, `chain!`, `scatter!`, `scatter_elements!` and `scatter_nd!` (tokens
//! to a typed, spanned input, then to a descriptor that passed every rule of `stridex-core`, then
//! to the tokens of the op), as a plain library. The proc-macro crate only converts tokens; tools
//! (the `explain` example) and other front ends use it as a normal dependency, so text means
//! exactly what the macros read.
//!
//! Modelled on serde_derive and sqlx-macros-core, in layers: [`ctxt`] collects every
//! independent mistake; [`parse`] only reads tokens; [`validate`] only applies the rules of
//! `stridex-core` and reports a broken one on the token at fault; [`expand`] only writes tokens.
//!
//! # Stability
//!
//! The supported surface is the text functions ([`gather_str`], [`gather_elements_str`],
//! [`gather_nd_str`], [`slice_str`], [`chain_str`], [`scatter_str`]), the token functions
//! ([`gather()`], [`gather_elements()`], [`gather_nd()`], [`slice()`], [`chain()`], [`scatter()`]) and [`expand`]'s `*_macro` functions:
//! their inputs are the macros' documented key language, and a change that breaks them is a
//! breaking release of stridex. The typed inputs of [`parse`] (their fields), [`ctxt`] and the
//! individual steps of [`validate`] and [`expand`] are public for stridex's own crates and may
//! change in any release; the error messages may read better from one release to the next.

pub mod ctxt;
pub mod expand;
pub mod parse;
pub mod validate;

pub use parse::{ChainInput, GatherInput, ItemHead, SliceInput, StageInput};
use proc_macro2::TokenStream;
use stridex_core::{ChainDesc, GatherDesc, GatherForm, ScatterDesc, SliceDesc};

/// The keys of a `gather!` (the tokens between its braces), parsed and checked.
pub fn gather(tokens: TokenStream) -> syn::Result<(GatherInput, GatherDesc)> {
    let input: GatherInput = syn::parse2(tokens)?;
    let desc = validate::gather(&input)?;
    Ok((input, desc))
}

/// The keys of a `gather_elements!`, parsed and checked.
pub fn gather_elements(tokens: TokenStream) -> syn::Result<(GatherInput, GatherDesc)> {
    gather_of(tokens, GatherForm::Elements)
}

/// The keys of a `gather_nd!`, parsed and checked.
pub fn gather_nd(tokens: TokenStream) -> syn::Result<(GatherInput, GatherDesc)> {
    gather_of(tokens, GatherForm::Nd)
}

/// [`gather_nd`] on text: `"data: f32[2, 2], indices: i64[2, 2]"`.
pub fn gather_nd_str(text: &str) -> Result<GatherDesc, String> {
    let tokens: TokenStream = text.parse().map_err(|e| format!("{e}"))?;
    gather_nd(tokens).map(|(_, desc)| desc).map_err(messages)
}

fn gather_of(tokens: TokenStream, form: GatherForm) -> syn::Result<(GatherInput, GatherDesc)> {
    use syn::parse::Parser;
    let input = (|input: syn::parse::ParseStream| parse::parse_gather(input, form)).parse2(tokens)?;
    let desc = validate::gather(&input)?;
    Ok((input, desc))
}

/// The keys of a `scatter!` (`form` Axis), `scatter_elements!` (Elements) or `scatter_nd!`
/// (Nd), parsed and checked.
pub fn scatter(tokens: TokenStream, form: GatherForm) -> syn::Result<(GatherInput, ScatterDesc)> {
    use syn::parse::Parser;
    let input = (|input: syn::parse::ParseStream| parse::parse_scatter(input, form)).parse2(tokens)?;
    let desc = validate::scatter(&input)?;
    Ok((input, desc))
}

/// [`scatter`] on text: `"data: f32[4, 2], indices: i64[3], updates: f32[3, 2], axis: 0"`.
pub fn scatter_str(text: &str, form: GatherForm) -> Result<ScatterDesc, String> {
    let tokens: TokenStream = text.parse().map_err(|e| format!("{e}"))?;
    scatter(tokens, form).map(|(_, desc)| desc).map_err(messages)
}

/// [`gather_elements`] on text: `"data: f32[3, 3], indices: i64[2, 3], axis: 0"`.
pub fn gather_elements_str(text: &str) -> Result<GatherDesc, String> {
    let tokens: TokenStream = text.parse().map_err(|e| format!("{e}"))?;
    gather_elements(tokens).map(|(_, desc)| desc).map_err(messages)
}

/// The keys of a `slice!`, parsed and checked.
pub fn slice(tokens: TokenStream) -> syn::Result<(SliceInput, SliceDesc)> {
    let input: SliceInput = syn::parse2(tokens)?;
    let desc = validate::slice(&input)?;
    Ok((input, desc))
}

/// The entries of a `chain!`, parsed and checked stage by stage.
pub fn chain(tokens: TokenStream) -> syn::Result<(ChainInput, ChainDesc)> {
    let input: ChainInput = syn::parse2(tokens)?;
    let desc = validate::chain(&input)?;
    Ok((input, desc))
}

/// [`chain`] on text: `"data: f32[100, 16], gather { indices: i64[4] }, slice { .. }"`.
pub fn chain_str(text: &str) -> Result<ChainDesc, String> {
    let tokens: TokenStream = text.parse().map_err(|e| format!("{e}"))?;
    chain(tokens).map(|(_, desc)| desc).map_err(messages)
}

/// [`gather`] on text: `"rules: onnx, data: f32[3, 2], indices: i64[2]"`. Every error message,
/// one per line.
pub fn gather_str(text: &str) -> Result<GatherDesc, String> {
    let tokens: TokenStream = text.parse().map_err(|e| format!("{e}"))?;
    gather(tokens).map(|(_, desc)| desc).map_err(messages)
}

/// [`slice()`] on text.
pub fn slice_str(text: &str) -> Result<SliceDesc, String> {
    let tokens: TokenStream = text.parse().map_err(|e| format!("{e}"))?;
    slice(tokens).map(|(_, desc)| desc).map_err(messages)
}

fn messages(e: syn::Error) -> String {
    e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
}
