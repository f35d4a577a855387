//! `gather!` and `slice!`: a thin wrapper of `stridex-syntax`, the descriptor front end
//! (tokens to a typed input, collecting every independent mistake, then the rules of
//! `stridex-core`), and [`expand`], which writes a `GatherOp`/`SliceOp` whose kernel is
//! specialized on the validated constants.

mod expand;

use proc_macro::TokenStream;

/// A gather kernel checked at compile time: `stridex::gather! { data: f32[3, 2], indices:
/// i64[2, 2], axis: 0 }`. The keys are documented on `stridex::gather!`.
#[proc_macro]
pub fn gather(input: TokenStream) -> TokenStream {
    let input = proc_macro2::TokenStream::from(input);
    let item = is_item(&input);
    match stridex_syntax::gather(input) {
        Ok((input, desc)) => expand::gather(&input, &desc),
        Err(err) => errors(err, item),
    }
    .into()
}

/// A slice kernel checked at compile time: `stridex::slice! { input: f32[4, 4], offsets: [0, 1],
/// sizes: [4, 3], strides: [1, 1] }`. The keys are documented on `stridex::slice!`.
#[proc_macro]
pub fn slice(input: TokenStream) -> TokenStream {
    let input = proc_macro2::TokenStream::from(input);
    let item = is_item(&input);
    match stridex_syntax::slice(input) {
        Ok((input, desc)) => expand::slice(&input, &desc),
        Err(err) => errors(err, item),
    }
    .into()
}

/// Whether the macro is used in its item form (`static NAME;` or `pub static NAME;` first).
fn is_item(input: &proc_macro2::TokenStream) -> bool {
    input.clone().into_iter().take(4).any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "static"))
}

/// Every collected error. As an expression, several `compile_error!`s need a block around
/// them; as an item, they stand alone.
fn errors(err: syn::Error, item: bool) -> proc_macro2::TokenStream {
    let errors = err.to_compile_error();
    if item {
        errors
    } else {
        quote::quote!({ #errors })
    }
}
