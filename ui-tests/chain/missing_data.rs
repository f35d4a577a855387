fn main() {
    let _ = stridex::chain! { gather { indices: i64[10] } };
}
