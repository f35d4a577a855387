// `_` leading sizes: gather indices and slice inputs whose count is known at run time.
stridex::gather! { static EMBED; data: f16[32000, 64], indices: i64[_, 8] }
stridex::gather! { pub static PICK; rules: openvino, data: f32[100], indices: i32[_], out_of_range: clamp }

fn main() {
    let _ = &EMBED;
    let _ = &PICK;
    let _ = stridex::slice! { input: u8[_, 3, 64, 64], s[.., .., 8..56, 8..56;2] };
    // Rows of 3 bytes: not whole words, so lanes are assembled one element at a time.
    let _ = stridex::slice! { input: u8[_, 3, 8, 8], s[.., .., .., 1..4] };
    let _ = stridex::gather! { data: u8[100], indices: i64[_] };
    let _ = stridex::slice! { input: f32[_, 3, 8, 8], offsets: [0, 0, 2, 1], sizes: [_, 3, 4, 6], strides: [1, 1, 1, 2] };
    let _ = stridex::slice! { rules: onnx, input: f32[_, 10], starts: [2], ends: [8], axes: [1] };
    let _ = stridex::slice! { rules: onnx, input: f32[_, 10], starts: [0, 2], ends: [9223372036854775807, 8] };
}

// Chains: the count on the data, or on one gather's indices; every later stage keeps it leading.
stridex::chain! {
    static LAST_TOKEN;
    data: f16[32000, 64],
    gather { indices: i64[_, 128], axis: 0 },
    slice { rules: onnx, starts: [-1], ends: [128], axes: [1] },
}

#[allow(dead_code)]
fn batch_chains() {
    let _ = &LAST_TOKEN;
    let _ = stridex::chain! {
        data: u8[_, 3, 64, 64],
        slice { s[.., .., 8..56, ..;-1] },
        gather { indices: i32[3], axis: 1 },
        slice { rules: onnx, starts: [0, 0], ends: [48, 64], axes: [2, 3], steps: [2, 2] },
    };
}
