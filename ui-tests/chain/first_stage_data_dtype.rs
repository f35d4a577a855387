// The first stage's input is the chain's data: a rule about it points there.
fn main() {
    let _ = stridex::chain! {
        data: bf16[4, 4],
        gather { rules: directml, indices: u32[1, 2], axis: 1 },
    };
}
