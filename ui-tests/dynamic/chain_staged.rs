// Rows of two bytes run a chain stage by stage; a `_` chain runs as one kernel.
fn main() {
    let _ = stridex::chain! { data: u8[_, 3], slice { s[.., 1..] } };
}
