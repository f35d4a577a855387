fn main() {
    let op = stridex::chain! {
        data: f32[4, 6],
        slice { s[1..4, ..] },
        gather_nd { indices: i64[2, 3] },
    };
    let _ = op.run(&[0.0; 24], (&[0i64; 6][..],));
}
