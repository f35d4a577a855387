// A strided `_` tensor must keep the `_` dimension outermost in memory: here the images of
// the batch would interleave, so a buffer's length cannot give the count.
fn main() {
    let _ = stridex::slice! { input: u8[_, 3, 8, 8] strides [1, 64, 8, 1], s[.., .., 1..7, ..] };
}
