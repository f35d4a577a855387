//! Shared by the integration tests: the naive reference and a random descriptor generator.

#![allow(dead_code)]

pub mod chains;
pub mod generate;
pub mod reference;
