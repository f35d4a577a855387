// A strided `_` output keeps the `_` dimension outermost in memory: here the results of
// successive counts would interleave.
fn main() {
    let _ = stridex::slice! { input: f32[_, 4, 8], s[.., 1..3, ..], output: [_, 2, 8] strides [8, 1, 2] };
}
