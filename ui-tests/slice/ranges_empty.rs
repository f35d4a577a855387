// ndarray walks a range backwards with a negative step, but the range itself runs forwards:
// 8..2 selects nothing (NumPy's [8:2:-1] would).
fn main() {
    let _ = stridex::slice!(input: f32[20, 10, 5], s[.., 8..2;-1]);
}
