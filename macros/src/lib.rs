//! `gather!` and `slice!`: parse tokens into a typed descriptor, validate it with the rules of
//! `stridex-core`, and expand it into a `GatherOp`/`SliceOp` whose kernel is specialized on the
//! validated constants.
//!
//! Modelled on dtolnay's derive crates: [`parse`] only reads tokens, [`validate`] only applies
//! rules and reports spanned errors, [`expand`] only writes tokens.

mod expand;
mod parse;
mod validate;

use proc_macro::TokenStream;

/// A gather kernel checked at compile time. See the `stridex` crate documentation.
#[proc_macro]
pub fn gather(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as parse::GatherInput);
    match validate::gather(&input) {
        Ok(desc) => expand::gather(&input, &desc),
        Err(err) => err.to_compile_error(),
    }
    .into()
}

/// A slice kernel checked at compile time. See the `stridex` crate documentation.
#[proc_macro]
pub fn slice(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as parse::SliceInput);
    match validate::slice(&input) {
        Ok(desc) => expand::slice(&input, &desc),
        Err(err) => err.to_compile_error(),
    }
    .into()
}
