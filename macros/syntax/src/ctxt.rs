//! Collects independent mistakes so one build reports them all, as serde_derive's `Ctxt` does;
//! like it, a context dropped without being checked panics (a bug in this crate: a mistake it
//! recorded would otherwise vanish). Every parse ends through [`Ctxt::finish`], which also
//! takes the error of a parse that stopped early, so no path drops one unchecked.

use std::cell::RefCell;

pub struct Ctxt {
    /// `None` once checked.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Default for Ctxt {
    fn default() -> Ctxt {
        Ctxt { errors: RefCell::new(Some(Vec::new())) }
    }
}

impl Ctxt {
    pub fn error(&self, e: syn::Error) {
        self.errors.borrow_mut().as_mut().expect("a mistake recorded after the check").push(e);
    }

    pub fn has_errors(&self) -> bool {
        self.errors.borrow().as_ref().is_some_and(|e| !e.is_empty())
    }

    /// Every error so far, combined into one, or `Ok` if there were none.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.borrow_mut().take().unwrap_or_default().into_iter();
        let Some(mut first) = errors.next() else { return Ok(()) };
        for e in errors {
            first.combine(e);
        }
        Err(first)
    }

    /// Ends a parse: `parsed` when nothing was recorded, else every recorded mistake, with the
    /// error of a parse that stopped early among them.
    pub fn finish<T>(self, parsed: syn::Result<T>) -> syn::Result<T> {
        match parsed {
            Ok(v) => self.check().map(|()| v),
            Err(e) => {
                self.error(e);
                Err(self.check().expect_err("an error was just recorded"))
            }
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("stridex-syntax: an error context was dropped without being checked");
        }
    }
}
