//! Descriptors the macros must accept (`accepted/`): every key, the item form, `_` counts,
//! chains and DirectML feature levels. Each file is a small program; here it compiles as a
//! module of this test and its `main` runs. (They were trybuild pass cases; as plain modules
//! they build with the rest of the tests, and trybuild, left with compile-fail cases only,
//! checks instead of building its own copy of every dependency.)

macro_rules! accepted {
    ($($name:ident: $file:literal;)*) => {$(
        #[allow(dead_code, clippy::all)]
        mod $name {
            include!($file);

            #[test]
            fn compiles_and_runs() {
                main();
            }
        }
    )*};
}

accepted! {
    chain_item: "accepted/chain_item.rs";
    dynamic: "accepted/dynamic.rs";
    feature_levels: "accepted/feature_levels.rs";
    item_form_and_every_key: "accepted/item_form_and_every_key.rs";
}
