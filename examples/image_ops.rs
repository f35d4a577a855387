//! Image operations on a u8 batch: crop, horizontal flip, 2x downsample and BGR<->RGB channel
//! reorder of an NCHW batch, then the same from an NHWC buffer through strides (no transpose
//! first), and all of them fused into one kernel with `chain!`, also with a batch size known
//! only at run time. Writes before/after pictures of the first image so a person can look
//! (binary PPM, which GIMP, ImageMagick, feh, eog and most viewers open):
//! `cargo run --example image_ops [-- OUT_DIR]` (default `target/image_ops`).

use std::path::Path;

const N: usize = 2;
const C: usize = 3;
const H: usize = 64;
const W: usize = 96;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// A small BGR test card: a gradient, a red square top-left, a blue bar bottom-right, and a
/// green stripe that shows which way is up and which way is left. Image 1 is image 0 darkened.
fn test_card() -> Vec<u8> {
    let mut nchw = vec![0u8; N * C * H * W];
    for n in 0..N {
        for y in 0..H {
            for x in 0..W {
                let (mut r, mut g, mut b) = ((x * 255 / W) as u8 / 2, (y * 255 / H) as u8 / 2, 64u8);
                if (8..24).contains(&y) && (8..28).contains(&x) {
                    (r, g, b) = (230, 30, 30);
                }
                if (44..56).contains(&y) && (60..90).contains(&x) {
                    (r, g, b) = (30, 60, 230);
                }
                if (4..8).contains(&x) {
                    (r, g, b) = (40, 220, 40);
                }
                let dim = |v: u8| if n == 1 { v / 2 } else { v };
                // Stored BGR, as OpenCV keeps it.
                for (c, v) in [b, g, r].into_iter().enumerate() {
                    nchw[((n * C + c) * H + y) * W + x] = dim(v);
                }
            }
        }
    }
    nchw
}

/// Image 0 of an NCHW batch of `h` x `w` images in channel order `order` (`"bgr"` or `"rgb"`),
/// as a binary PPM: a three-line header, then the RGB bytes row by row. (A PNG would need an
/// encoder, and the `png` crate as a dev-dependency changes the features of a compression
/// crate that CubeCL's dependencies share, so every `cargo doc` and plain build re-checked
/// CubeCL and Burn apart from the test builds.)
fn write_ppm(dir: &Path, name: &str, nchw: &[u8], h: usize, w: usize, order: &str) -> std::io::Result<()> {
    let mut rgb = Vec::with_capacity(h * w * 3);
    for y in 0..h {
        for x in 0..w {
            for c in [0, 1, 2] {
                let src = if order == "bgr" { 2 - c } else { c };
                rgb.push(nchw[(src * h + y) * w + x]);
            }
        }
    }
    let mut ppm = format!("P6\n{w} {h}\n255\n").into_bytes();
    ppm.extend_from_slice(&rgb);
    std::fs::write(dir.join(name), ppm)?;
    println!("  wrote {}", dir.join(name).display());
    Ok(())
}

/// `out[n, c, y, x] == src(n, c, y, x)` over an NCHW output of `h` x `w` images.
fn check(what: &str, out: &[u8], h: usize, w: usize, src: impl Fn(usize, usize, usize, usize) -> u8) {
    for n in 0..N {
        for c in 0..C {
            for y in 0..h {
                for x in 0..w {
                    let got = out[((n * C + c) * h + y) * w + x];
                    assert_eq!(got, src(n, c, y, x), "{what}: [{n}, {c}, {y}, {x}]");
                }
            }
        }
    }
    println!("  {what}: every pixel checked");
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    println!("device: {}", stridex::Device::default_device()?.description());
    let dir = std::env::args().nth(1).unwrap_or_else(|| "target/image_ops".into());
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    let img = test_card();
    let at = |n: usize, c: usize, y: usize, x: usize| img[((n * C + c) * H + y) * W + x];
    write_ppm(dir, "0_input.ppm", &img, H, W, "bgr")?;

    println!("NCHW u8[2, 3, 64, 96], one op at a time:");
    // Crop rows 8..56, columns 16..80 (DirectML SLICE1).
    let crop = stridex::slice! { input: u8[2, 3, 64, 96], offsets: [0, 0, 8, 16], sizes: [2, 3, 48, 64], strides: [1, 1, 1, 1] };
    let cropped = crop.run(&img)?;
    check("crop", cropped.data(), 48, 64, |n, c, y, x| at(n, c, y + 8, x + 16));
    write_ppm(dir, "1_crop.ppm", cropped.data(), 48, 64, "bgr")?;

    // Horizontal flip (ONNX Slice with step -1 on W).
    let flip = stridex::slice! { rules: onnx, input: u8[2, 3, 64, 96], starts: [-1], ends: [-97], axes: [3], steps: [-1] };
    let flipped = flip.run(&img)?;
    check("flip", flipped.data(), H, W, |n, c, y, x| at(n, c, y, W - 1 - x));
    write_ppm(dir, "2_flip.ppm", flipped.data(), H, W, "bgr")?;

    // 2x downsample: every other row and column (SLICE1 strides).
    let down = stridex::slice! { input: u8[2, 3, 64, 96], offsets: [0, 0, 0, 0], sizes: [2, 3, 64, 96], strides: [1, 1, 2, 2] };
    let small = down.run(&img)?;
    check("downsample", small.data(), 32, 48, |n, c, y, x| at(n, c, 2 * y, 2 * x));
    write_ppm(dir, "3_downsample.ppm", small.data(), 32, 48, "bgr")?;

    // BGR -> RGB: a gather of the channel axis with indices [2, 1, 0].
    let swap = stridex::gather! { data: u8[2, 3, 64, 96], indices: i32[3], axis: 1 };
    let rgb = swap.run(&img, &[2, 1, 0])?;
    check("BGR -> RGB", rgb.data(), H, W, |n, c, y, x| at(n, 2 - c, y, x));
    write_ppm(dir, "4_rgb_read_as_rgb.ppm", rgb.data(), H, W, "rgb")?;

    // The same four at once, fused into one kernel: no intermediate image is written.
    let all = stridex::chain! {
        data: u8[2, 3, 64, 96],
        slice { offsets: [0, 0, 8, 16], sizes: [2, 3, 48, 64], strides: [1, 1, 1, 1] },
        slice { rules: onnx, starts: [-1], ends: [-65], axes: [3], steps: [-1] },
        gather { indices: i32[3], axis: 1 },
        slice { offsets: [0, 0, 0, 0], sizes: [2, 3, 48, 64], strides: [1, 1, 2, 2] },
    };
    let fused = all.run(&img, (&[2i32, 1, 0],))?;
    let chain_px = |n: usize, c: usize, y: usize, x: usize| at(n, 2 - c, 8 + 2 * y, 16 + 63 - 2 * x);
    check("crop -> flip -> RGB -> downsample, one kernel", fused.data(), 24, 32, chain_px);
    println!("  (fused into one kernel: {})", all.is_fused()?);
    write_ppm(dir, "5_chain.ppm", fused.data(), 24, 32, "rgb")?;

    println!("NHWC u8[2, 64, 96, 3] in memory, read through strides:");
    let mut nhwc = vec![0u8; img.len()];
    for n in 0..N {
        for c in 0..C {
            for y in 0..H {
                for x in 0..W {
                    nhwc[((n * H + y) * W + x) * C + c] = at(n, c, y, x);
                }
            }
        }
    }
    // The NHWC buffer described in NCHW order: element strides [H*W*C, 1, W*C, C]. The result
    // is written NHWC too (a permuted output layout).
    let nhwc_chain = stridex::chain! {
        data: u8[2, 3, 64, 96] strides [18432, 1, 288, 3],
        slice { offsets: [0, 0, 8, 16], sizes: [2, 3, 48, 64], strides: [1, 1, 1, 1] },
        slice { rules: onnx, starts: [-1], ends: [-65], axes: [3], steps: [-1] },
        gather { indices: i32[3], axis: 1 },
        slice { offsets: [0, 0, 0, 0], sizes: [2, 3, 48, 64], strides: [1, 1, 2, 2] },
        output: [2, 3, 24, 32] strides [2304, 1, 96, 3],
    };
    let y = nhwc_chain.run(&nhwc, (&[2i32, 1, 0],))?;
    assert_eq!(y.strides(), [2304, 1, 96, 3]);
    // Read back in NCHW order, it equals the NCHW chain's result.
    assert_eq!(y.to_row_major(), fused.data());
    println!("  the same four ops from NHWC to NHWC: every pixel equals the NCHW result");

    // A model server's batch changes per request: `_` leaves it to run time, read from the
    // buffer's length (the `_` dimension stays outermost in memory: its stride spans an image).
    // NHWC in, NCHW out, one kernel for every batch size.
    let batch = stridex::chain! {
        data: u8[_, 3, 64, 96] strides [18432, 1, 288, 3],
        slice { s[.., .., 8..56, 16..80] },
        slice { s[.., .., .., ..;-1] },
        gather { indices: i32[3], axis: 1 },
        slice { s[.., .., ..;2, ..;2] },
    };
    for images in 1..=N {
        let y = batch.run(&nhwc[..images * H * W * C], (&[2i32, 1, 0],))?;
        assert_eq!(y.shape(), [images, 3, 24, 32]);
        assert_eq!(y.data(), &fused.data()[..images * 3 * 24 * 32]);
    }
    println!("  with a run-time batch (`_`), NHWC in and NCHW out: batches of 1 and 2 equal the NCHW result (one kernel: {})", batch.is_fused()?);
    Ok(())
}
