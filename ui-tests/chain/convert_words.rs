// A 16-bit result is written two elements to a 32-bit word: a pitch of 7 leaves no rows of
// whole words.
fn main() {
    let _ = stridex::chain! {
        data: u8[3, 5],
        convert { to: bf16 },
        output: [3, 5] strides [7, 1],
    };
}
