fn main() {
    let op = stridex::chain! {
        data: f32[4, 6],
        slice { s[1..4, ..] },
        gather_elements { indices: i64[3], axis: 0 },
    };
    let _ = op.run(&[0.0; 24], (&[0i64; 3][..],));
}
