//! Random descriptors that are valid by construction, with hostile data and indices.

use super::reference::{self as r, Policy, Rules};
use stridex_core::{
    DType, Dims, GatherDesc, GatherRules, OutOfRange, OutputDecl, SignedDims, SliceDesc, SliceWindow,
    TensorDecl,
};

/// The generators' source of choices. From a seed, every choice is pseudo-random (SplitMix64).
/// From a choice sequence (which proptest draws and shrinks), the structure of a case is read
/// from the sequence, and 0, every generator's smallest option, once it runs out; so a failure
/// shrinks towards the smallest descriptor that still fails. Buffer contents (`bytes`) always
/// come from the seed.
pub struct Rng {
    choices: Option<Vec<u64>>,
    next: usize,
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { choices: None, next: 0, state: seed }
    }

    /// Choices from `choices`, then zeros; buffer bytes from `seed`.
    pub fn from_choices(choices: Vec<u64>, seed: u64) -> Rng {
        Rng { choices: Some(choices), next: 0, state: seed }
    }

    fn random(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn next(&mut self) -> u64 {
        match &self.choices {
            None => self.random(),
            Some(c) => {
                let v = c.get(self.next).copied().unwrap_or(0);
                self.next += 1;
                v
            }
        }
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.random() as u8).collect()
    }
}

/// Strides for an input: packed, permuted, padded or broadcast.
pub fn input_strides(rng: &mut Rng, sizes: &[usize]) -> Option<Vec<usize>> {
    match rng.below(5) {
        0 => None,
        1 => Some(r::packed(sizes)),
        2 => Some(permuted(rng, sizes, false)),
        3 => Some(permuted(rng, sizes, true)),
        _ => {
            let padded = rng.chance(50);
            let mut s = permuted(rng, sizes, padded);
            for (i, st) in s.iter_mut().enumerate() {
                if sizes[i] > 0 && rng.chance(40) {
                    *st = 0;
                }
            }
            Some(s)
        }
    }
}

/// Strides for an output: never overlapping (packed, permuted, padded).
pub fn output_strides(rng: &mut Rng, sizes: &[usize]) -> Option<Vec<usize>> {
    match rng.below(4) {
        0 => None,
        1 => Some(r::packed(sizes)),
        2 => Some(permuted(rng, sizes, false)),
        _ => Some(permuted(rng, sizes, true)),
    }
}

/// Nested strides in a random dimension order, with random gaps when `padded`.
fn permuted(rng: &mut Rng, sizes: &[usize], padded: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut strides = vec![0; sizes.len()];
    let mut next = 1usize;
    for &d in order.iter().rev() {
        let step = if padded && rng.chance(50) { next + rng.below(3) } else { next };
        strides[d] = step;
        next = step * sizes[d].max(1);
    }
    strides
}

fn sizes(rng: &mut Rng, rank: usize, max: i64, zero: bool) -> Vec<usize> {
    (0..rank).map(|_| if zero && rng.chance(4) { 0 } else { rng.range(1, max) as usize }).collect()
}

pub fn dims(v: &[usize]) -> Dims {
    Dims::of(v)
}

/// A tensor as a descriptor declares it: `strides` `None` is packed.
fn decl(dtype: DType, sizes: &[usize], strides: Option<&[usize]>) -> TensorDecl {
    TensorDecl { dtype, sizes: dims(sizes), strides: strides.map(dims) }
}

/// The reference's policy as a descriptor names it.
fn out_of_range(policy: Policy) -> OutOfRange {
    match policy {
        Policy::Error => OutOfRange::Error,
        Policy::Zero => OutOfRange::Zero,
        Policy::Clamp => OutOfRange::Clamp,
    }
}

/// A valid gather: the reference form, the stridex form, and the element types.
pub struct GatherCase {
    pub reference: r::Gather,
    pub desc: GatherDesc,
}

pub fn gather_case(rng: &mut Rng, data_types: &[DType]) -> GatherCase {
    loop {
        if let Some(c) = try_gather_case(rng, data_types) {
            return c;
        }
    }
}

fn try_gather_case(rng: &mut Rng, data_types: &[DType]) -> Option<GatherCase> {
    let rules = rng.pick(&[Rules::Onnx, Rules::OpenVino, Rules::DirectMl]);
    let directml = rules == Rules::DirectMl;
    let r = rng.range(1, 4) as usize;
    let data_sizes = sizes(rng, r, 5, !directml);
    let data_type = loop {
        let t = rng.pick(data_types);
        if !(directml && matches!(t, DType::Bool | DType::BF16)) {
            break t;
        }
    };
    let index_type = match rules {
        Rules::Onnx => rng.pick(&[DType::I32, DType::I64]),
        _ => rng.pick(&[DType::I32, DType::I64, DType::U32, DType::U64]),
    };
    let axis_n = rng.below(r);
    let axis = if !directml && rng.chance(40) { axis_n as i64 - r as i64 } else { axis_n as i64 };
    let (index_sizes, batch_dims, index_dims) = match rules {
        Rules::Onnx => {
            let q = rng.below(4);
            (sizes(rng, q, 4, true), 0i64, 0)
        }
        Rules::OpenVino => {
            let q = rng.below(4);
            let b = rng.below(axis_n.min(q) + 1);
            let mut s = sizes(rng, q, 4, true);
            s[..b].copy_from_slice(&data_sizes[..b]);
            let raw = if b > 0 && rng.chance(40) { b as i64 - q as i64 } else { b as i64 };
            (s, raw, 0)
        }
        Rules::DirectMl => {
            let k = rng.below(r + 1);
            let mut s = vec![1; r - k];
            s.extend(sizes(rng, k, 4, false));
            (s, 0, k)
        }
    };
    if r + index_sizes.len() > 9 {
        return None;
    }
    let policy = match rng.below(4) {
        0 => Policy::Error,
        1 => Policy::Zero,
        2 => Policy::Clamp,
        _ => match rules {
            Rules::Onnx => Policy::Error,
            Rules::OpenVino => Policy::Zero,
            Rules::DirectMl => Policy::Clamp,
        },
    };
    let mut reference = r::Gather {
        rules,
        data_strides: input_strides(rng, &data_sizes).unwrap_or_else(|| r::packed(&data_sizes)),
        data_sizes,
        index_strides: r::packed(&index_sizes),
        index_sizes,
        axis,
        batch_dims,
        index_dims,
        policy,
        out_strides: None,
        signed_indices: matches!(index_type, DType::I32 | DType::I64),
    };
    if directml && !reference.directml_fits() {
        return None;
    }
    let given_data_strides = rng.chance(75).then(|| reference.data_strides.clone());
    if given_data_strides.is_none() {
        reference.data_strides = r::packed(&reference.data_sizes);
    }
    let index_strides = input_strides(rng, &reference.index_sizes);
    reference.index_strides = index_strides.clone().unwrap_or_else(|| r::packed(&reference.index_sizes));
    let out_shape = reference.output_shape();
    let declare_output = rng.chance(50);
    let out_strides = if declare_output { output_strides(rng, &out_shape) } else { None };
    reference.out_strides = out_strides.clone();
    let default_policy = match rules {
        Rules::Onnx => Policy::Error,
        Rules::OpenVino => Policy::Zero,
        Rules::DirectMl => Policy::Clamp,
    };
    let desc = GatherDesc {
        form: stridex_core::GatherForm::Axis,
        rules: match rules {
            Rules::Onnx => GatherRules::Onnx,
            Rules::OpenVino => GatherRules::OpenVino,
            Rules::DirectMl => GatherRules::DirectMl,
        },
        data: decl(data_type, &reference.data_sizes, given_data_strides.as_deref()),
        indices: decl(index_type, &reference.index_sizes, index_strides.as_deref()),
        axis,
        batch_dims: (rules == Rules::OpenVino && (batch_dims != 0 || rng.chance(50))).then_some(batch_dims),
        index_dims: (directml && (index_dims != r || rng.chance(50))).then_some(index_dims),
        out_of_range: (policy != default_policy || rng.chance(30)).then_some(out_of_range(policy)),
        output: declare_output.then(|| OutputDecl {
            dtype: rng.chance(50).then_some(data_type),
            sizes: dims(&out_shape),
            strides: out_strides.as_deref().map(dims),
        }),
        feature_level: None,
        dynamic_leading: false,
    };
    Some(GatherCase { reference, desc })
}

/// A valid GatherElements: the reference form and the stridex form.
pub struct ElementsCase {
    pub reference: r::GatherElements,
    pub desc: GatherDesc,
}

/// Any rule set, rank 1-4, any axis (negative too), indices of the data's rank (smaller than
/// the data along the other dimensions under ONNX), strided data and indices, a declared
/// output sometimes, every policy.
pub fn elements_case(rng: &mut Rng, data_types: &[DType]) -> ElementsCase {
    let rules = rng.pick(&[GatherRules::Onnx, GatherRules::OpenVino, GatherRules::DirectMl]);
    let data_type = rng.pick(data_types);
    let r = rng.range(1, 4) as usize;
    let data_sizes = sizes(rng, r, 4, false);
    let axis_n = rng.below(r);
    let axis = if rules != GatherRules::DirectMl && rng.chance(40) {
        axis_n as i64 - r as i64
    } else {
        axis_n as i64
    };
    let index_sizes: Vec<usize> = (0..r)
        .map(|k| match k {
            _ if k == axis_n => rng.range(0, 5) as usize,
            _ if rules == GatherRules::Onnx && rng.chance(30) => rng.range(0, data_sizes[k] as i64) as usize,
            _ => data_sizes[k],
        })
        .collect();
    let index_type = match rules {
        GatherRules::Onnx => rng.pick(&[DType::I32, DType::I64]),
        _ => rng.pick(&[DType::I32, DType::I64, DType::U32, DType::U64]),
    };
    let policy = rng.pick(&[Policy::Error, Policy::Zero, Policy::Clamp]);
    let data_strides = input_strides(rng, &data_sizes);
    let index_strides = input_strides(rng, &index_sizes);
    let out_strides = if rng.chance(40) { output_strides(rng, &index_sizes) } else { None };
    let reference = r::GatherElements {
        data_strides: data_strides.clone().unwrap_or_else(|| r::packed(&data_sizes)),
        data_sizes: data_sizes.clone(),
        index_strides: index_strides.clone().unwrap_or_else(|| r::packed(&index_sizes)),
        index_sizes: index_sizes.clone(),
        axis,
        policy,
        out_strides: out_strides.clone(),
    };
    let desc = GatherDesc {
        form: stridex_core::GatherForm::Elements,
        out_of_range: Some(out_of_range(policy)),
        output: out_strides.as_ref().map(|o| OutputDecl {
            dtype: None,
            sizes: dims(&index_sizes),
            strides: Some(dims(o)),
        }),
        ..GatherDesc::new(
            rules,
            decl(data_type, &data_sizes, data_strides.as_deref()),
            decl(index_type, &index_sizes, index_strides.as_deref()),
            axis,
        )
    };
    ElementsCase { reference, desc }
}

/// A valid GatherND: the reference form and the stridex form.
pub struct NdCase {
    pub reference: r::GatherNd,
    pub desc: GatherDesc,
}

/// Any rule set, data of rank 1-4, indices of rank 1-3 ending in tuples of 1 to `rank - b`
/// coordinates, batch dimensions, strided data and indices, a declared output sometimes, every
/// policy.
pub fn nd_case(rng: &mut Rng, data_types: &[DType]) -> NdCase {
    let rules = rng.pick(&[GatherRules::Onnx, GatherRules::OpenVino, GatherRules::DirectMl]);
    let data_type = rng.pick(data_types);
    let r = rng.range(1, 4) as usize;
    let data_sizes = sizes(rng, r, 4, false);
    let q = rng.range(1, 3) as usize;
    let b = if rng.chance(30) { rng.below(r.min(q)) } else { 0 };
    let k = rng.range(1, (r - b) as i64) as usize;
    let mut index_sizes: Vec<usize> = data_sizes[..b].to_vec();
    index_sizes.extend((b..q - 1).map(|_| rng.range(0, 4) as usize));
    index_sizes.push(k);
    let index_type = match rules {
        GatherRules::Onnx => DType::I64,
        _ => rng.pick(&[DType::I32, DType::I64, DType::U32, DType::U64]),
    };
    let policy = rng.pick(&[Policy::Error, Policy::Zero, Policy::Clamp]);
    let data_strides = input_strides(rng, &data_sizes);
    let index_strides = input_strides(rng, &index_sizes);
    let mut reference = r::GatherNd {
        data_strides: data_strides.clone().unwrap_or_else(|| r::packed(&data_sizes)),
        data_sizes: data_sizes.clone(),
        index_strides: index_strides.clone().unwrap_or_else(|| r::packed(&index_sizes)),
        index_sizes: index_sizes.clone(),
        batch_dims: b,
        policy,
        out_strides: None,
    };
    let shape = reference.shape();
    let out_strides = if rng.chance(40) { output_strides(rng, &shape) } else { None };
    reference.out_strides = out_strides.clone();
    let desc = GatherDesc {
        form: stridex_core::GatherForm::Nd,
        batch_dims: (b > 0 || rng.chance(20)).then_some(b as i64),
        out_of_range: Some(out_of_range(policy)),
        output: out_strides.as_ref().map(|o| OutputDecl {
            dtype: None,
            sizes: dims(&shape),
            strides: Some(dims(o)),
        }),
        ..GatherDesc::new(
            rules,
            decl(data_type, &data_sizes, data_strides.as_deref()),
            decl(index_type, &index_sizes, index_strides.as_deref()),
            0,
        )
    };
    NdCase { reference, desc }
}

/// Index values for axis extent `s`: mostly valid (negative ones too, for signed types), some
/// out of range both ways, some beyond 32 bits.
pub fn index_values(rng: &mut Rng, n: usize, s: usize, signed: bool, wide: bool, hostile: bool) -> Vec<i128> {
    (0..n)
        .map(|_| {
            let s = s as i128;
            let valid_neg = signed && s > 0 && rng.chance(30);
            if hostile && rng.chance(15) || s == 0 {
                let big: i128 = if wide { 1 << 32 } else { 1 << 20 };
                match rng.below(4) {
                    0 => s + rng.range(0, 3) as i128,
                    1 if signed => -s - 1 - rng.range(0, 3) as i128,
                    2 => big + rng.range(0, 5) as i128,
                    3 if signed => -big - rng.range(0, 5) as i128,
                    _ => s,
                }
            } else if valid_neg {
                -(rng.range(1, s as i64) as i128)
            } else {
                rng.range(0, s as i64 - 1) as i128
            }
        })
        .collect()
}

/// A valid ONNX Slice-13 slice of a packed input: starts and ends anywhere (clamped), axes
/// in any order (negative too), steps of either sign; the result may be empty.
pub struct OnnxSliceCase {
    pub shape: Vec<usize>,
    pub starts: Vec<i64>,
    pub ends: Vec<i64>,
    pub axes: Option<Vec<i64>>,
    pub steps: Option<Vec<i64>>,
    pub desc: SliceDesc,
}

pub fn onnx_slice_case(rng: &mut Rng, data_types: &[DType]) -> OnnxSliceCase {
    let rank = rng.range(1, 4) as usize;
    let shape = sizes(rng, rank, 7, false);
    let dtype = rng.pick(data_types);
    let n = rng.range(1, rank as i64) as usize;
    let mut order: Vec<usize> = (0..rank).collect();
    for i in 0..rank {
        order.swap(i, i + rng.below(rank - i));
    }
    let (mut starts, mut ends, mut axes, mut steps) = (vec![], vec![], vec![], vec![]);
    for &axis in &order[..n] {
        let d = shape[axis] as i64;
        starts.push(rng.range(-2 * d - 1, 2 * d + 1));
        ends.push(rng.range(-2 * d - 1, 2 * d + 1));
        axes.push(if rng.chance(30) { axis as i64 - rank as i64 } else { axis as i64 });
        let step = rng.range(1, 3);
        steps.push(if rng.chance(40) { -step } else { step });
    }
    // Axes may be left out only when they are the first ones in order.
    let default_axes = axes.iter().enumerate().all(|(k, &a)| a == k as i64);
    let axes = if default_axes && rng.chance(50) { None } else { Some(axes) };
    let steps = if steps.iter().all(|&s| s == 1) && rng.chance(50) { None } else { Some(steps) };
    let desc = SliceDesc {
        input: TensorDecl { dtype, sizes: dims(&shape), strides: None },
        window: SliceWindow::Onnx {
            starts: SignedDims::of(&starts),
            ends: SignedDims::of(&ends),
            axes: axes.as_deref().map(SignedDims::of),
            steps: steps.as_deref().map(SignedDims::of),
        },
        output: None,
        feature_level: None,
        dynamic_leading: false,
    };
    OnnxSliceCase { shape, starts, ends, axes, steps, desc }
}

/// A valid DirectML SLICE1 slice.
pub struct SliceCase {
    pub reference: r::Slice1,
    pub desc: SliceDesc,
}

pub fn slice_case(rng: &mut Rng, data_types: &[DType]) -> SliceCase {
    let rank = rng.range(1, 5) as usize;
    let sizes = sizes(rng, rank, 6, false);
    let dtype = loop {
        let t = rng.pick(data_types);
        if !matches!(t, DType::Bool | DType::BF16) {
            break t;
        }
    };
    let mut offsets = vec![];
    let mut window = vec![];
    let mut steps = vec![];
    for &n in &sizes {
        let size = rng.range(1, n as i64) as usize;
        offsets.push(rng.range(0, (n - size) as i64) as usize);
        window.push(size);
        let step = rng.range(1, 3);
        steps.push(if rng.chance(40) { -step } else { step });
    }
    let strides = input_strides(rng, &sizes);
    let mut reference = r::Slice1 {
        strides: strides.clone().unwrap_or_else(|| r::packed(&sizes)),
        sizes,
        offsets,
        window,
        steps,
        out_sizes: None,
        out_strides: None,
    };
    let declare = rng.chance(50);
    if declare {
        let max = reference.output_shape();
        let out: Vec<usize> =
            max.iter().map(|&m| if rng.chance(30) { rng.range(1, m as i64) as usize } else { m }).collect();
        reference.out_strides = output_strides(rng, &out);
        reference.out_sizes = Some(out);
    }
    let desc = SliceDesc {
        input: decl(dtype, &reference.sizes, strides.as_deref()),
        window: SliceWindow::DirectMl {
            offsets: dims(&reference.offsets),
            sizes: dims(&reference.window),
            strides: SignedDims::of(&reference.steps),
        },
        output: declare.then(|| OutputDecl {
            dtype: None,
            sizes: dims(reference.out_sizes.as_ref().unwrap()),
            strides: reference.out_strides.as_deref().map(dims),
        }),
        feature_level: None,
        dynamic_leading: false,
    };
    SliceCase { reference, desc }
}

/// Channels-last inputs read as channels-first (the case transposed blocks are for), with 4,
/// 8 and 16 channels and windows that keep or break the alignment.
pub fn channels_last_slices() -> Vec<SliceCase> {
    let mut cases = vec![];
    for (n, c, h, w) in [(2, 4, 3, 8), (1, 8, 2, 4), (2, 16, 2, 4), (1, 12, 3, 4)] {
        let sizes = vec![n, c, h, w];
        let strides = vec![h * w * c, 1, w * c, c];
        for (offsets, window, steps) in [
            (vec![0, 0, 0, 0], sizes.clone(), vec![1, 1, 1, 1]),
            (vec![0, 0, 1, 0], vec![n, c, h - 1, w], vec![1, 1, 1, 1]),
            (vec![0, 0, 0, 0], sizes.clone(), vec![1, 1, -1, 1]),
            (vec![0, 1, 0, 0], vec![n, c - 1, h, w], vec![1, 1, 1, 1]),
        ] {
            let desc = SliceDesc::new(
                TensorDecl { dtype: DType::F32, sizes: dims(&sizes), strides: Some(dims(&strides)) },
                SliceWindow::DirectMl {
                    offsets: dims(&offsets),
                    sizes: dims(&window),
                    strides: SignedDims::of(&steps),
                },
            );
            let reference = r::Slice1 {
                sizes: sizes.clone(),
                strides: strides.clone(),
                offsets,
                window,
                steps,
                out_sizes: None,
                out_strides: None,
            };
            cases.push(SliceCase { reference, desc });
        }
    }
    cases
}
