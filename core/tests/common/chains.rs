//! Random chains of 2 to 4 stages (gathers under every rule set and policy, SLICE1 windows,
//! ONNX slices), each valid on the shape the stage before it gives, with a staged reference:
//! the stages run one by one through the naive reference of `reference.rs`.

use super::generate::{self, Rng};
use super::reference::{self as r, Outcome, Policy, Rules};
use std::borrow::Cow;
use stridex_core::{
    ChainDesc, DType, GatherRules, GatherStage, OutOfRange, SignedDims, SliceWindow, StageDesc, TensorDecl,
};

/// One stage of a chain case, as the reference runs it.
pub enum StageRef {
    /// The gather (its `data_*` fields describe the stage's input) and its index values.
    Gather {
        gather: r::Gather,
        indices: Vec<i128>,
        index_type: DType,
    },
    Slice1(r::Slice1),
    OnnxSlice {
        starts: Vec<i64>,
        ends: Vec<i64>,
        axes: Option<Vec<i64>>,
        steps: Option<Vec<i64>>,
    },
}

pub struct ChainCase {
    pub dtype: DType,
    pub data_sizes: Vec<usize>,
    pub data_strides: Vec<usize>,
    pub stages: Vec<StageRef>,
    pub desc: ChainDesc,
}

/// What running the stages one by one gives: the output (packed) and its shape, or the first
/// stage (1-based) whose `error`-policy indices hold one out of range, with its position and
/// value.
pub enum Staged<T> {
    Ok { shape: Vec<usize>, buffer: Vec<T> },
    Err { stage: usize, position: Vec<usize>, value: i128 },
}

fn elements(sizes: &[usize]) -> usize {
    sizes.iter().product()
}

pub fn chain_case(rng: &mut Rng, data_types: &[DType]) -> ChainCase {
    for _ in 0..10_000 {
        if let Some(c) = try_chain_case(rng, data_types) {
            return c;
        }
    }
    panic!("no valid chain in 10000 tries: the generator lost its way (a choice sequence of zeros must give one)")
}

fn try_chain_case(rng: &mut Rng, data_types: &[DType]) -> Option<ChainCase> {
    let dtype = rng.pick(data_types);
    let rank = rng.range(1, 4) as usize;
    let data_sizes: Vec<usize> = (0..rank).map(|_| rng.range(1, 5) as usize).collect();
    let given_strides = generate::input_strides(rng, &data_sizes);
    let data_strides = given_strides.clone().unwrap_or_else(|| r::packed(&data_sizes));
    let n = rng.range(2, 4) as usize;
    let (mut shape, mut strides) = (data_sizes.clone(), data_strides.clone());
    let (mut stages, mut descs) = (vec![], vec![]);
    let mut gathers = 0;
    for i in 0..n {
        let gather = gathers < 4 && rng.chance(55);
        let (stage, desc, out) = if gather {
            gathers += 1;
            // A scalar takes no further stage: only the last gather may make one.
            gather_stage(rng, dtype, &shape, &strides, i + 1 == n)?
        } else {
            slice_stage(rng, dtype, &shape, &strides)?
        };
        if out.len() > 8 || elements(&out) > 4096 {
            return None;
        }
        stages.push(stage);
        descs.push(desc);
        strides = r::packed(&out);
        shape = out;
    }
    let desc = ChainDesc {
        data: TensorDecl {
            dtype,
            sizes: generate::dims(&data_sizes),
            strides: given_strides.as_deref().map(generate::dims),
        },
        stages: Cow::Owned(descs),
        output: None,
        dynamic_leading: None,
    };
    Some(ChainCase { dtype, data_sizes, data_strides, stages, desc })
}

fn gather_stage(
    rng: &mut Rng,
    dtype: DType,
    shape: &[usize],
    strides: &[usize],
    last: bool,
) -> Option<(StageRef, StageDesc, Vec<usize>)> {
    let r = shape.len();
    let rules = rng.pick(&[Rules::Onnx, Rules::OpenVino, Rules::DirectMl]);
    let directml = rules == Rules::DirectMl;
    if directml && matches!(dtype, DType::Bool | DType::BF16) {
        return None;
    }
    let index_type = match rules {
        Rules::Onnx => rng.pick(&[DType::I32, DType::I64]),
        _ => rng.pick(&[DType::I32, DType::I64, DType::U32, DType::U64]),
    };
    let axis_n = rng.below(r);
    let axis = if !directml && rng.chance(30) { axis_n as i64 - r as i64 } else { axis_n as i64 };
    let small =
        |rng: &mut Rng, k: usize| -> Vec<usize> { (0..k).map(|_| rng.range(1, 3) as usize).collect() };
    // Indices of rank 0 on data of rank 1 give a scalar.
    let q_min = usize::from(r == 1 && !last);
    let (index_sizes, batch_dims, index_dims) = match rules {
        Rules::Onnx => {
            let q = q_min + rng.below(3 - q_min);
            (small(rng, q), 0i64, 0)
        }
        Rules::OpenVino => {
            let q = q_min + rng.below(3 - q_min);
            let b = rng.below(axis_n.min(q) + 1);
            let mut s = small(rng, q);
            s[..b].copy_from_slice(&shape[..b]);
            (s, b as i64, 0)
        }
        Rules::DirectMl => {
            let k = rng.below(r + 1);
            let mut s = vec![1; r - k];
            s.extend(small(rng, k));
            (s, 0, k)
        }
    };
    let policy = rng.pick(&[Policy::Zero, Policy::Clamp, Policy::Clamp, Policy::Zero, Policy::Error]);
    let index_strides = generate::input_strides(rng, &index_sizes);
    let gather = r::Gather {
        rules,
        data_sizes: shape.to_vec(),
        data_strides: strides.to_vec(),
        index_strides: index_strides.clone().unwrap_or_else(|| r::packed(&index_sizes)),
        index_sizes,
        axis,
        batch_dims,
        index_dims,
        policy,
        out_strides: None,
        signed_indices: matches!(index_type, DType::I32 | DType::I64),
    };
    if directml && !gather.directml_fits() {
        return None;
    }
    let wide = matches!(index_type, DType::I64 | DType::U64);
    // Hostile indices (out of range, beyond 32 bits) under every policy: under `error` the
    // chain must fail exactly where running the stages one by one does.
    let hostile = rng.chance(if policy == Policy::Error { 15 } else { 50 });
    let n = r::min_len(&gather.index_sizes, &gather.index_strides);
    let indices = generate::index_values(rng, n, shape[gather.axis()], gather.signed_indices, wide, hostile);
    let out = gather.output_shape();
    let desc = StageDesc::Gather(GatherStage {
        form: stridex_core::GatherForm::Axis,
        rules: match rules {
            Rules::Onnx => GatherRules::Onnx,
            Rules::OpenVino => GatherRules::OpenVino,
            Rules::DirectMl => GatherRules::DirectMl,
        },
        indices: TensorDecl {
            dtype: index_type,
            sizes: generate::dims(&gather.index_sizes),
            strides: index_strides.as_deref().map(generate::dims),
        },
        axis,
        batch_dims: (rules == Rules::OpenVino).then_some(batch_dims),
        index_dims: directml.then_some(index_dims),
        out_of_range: Some(match policy {
            Policy::Error => OutOfRange::Error,
            Policy::Zero => OutOfRange::Zero,
            Policy::Clamp => OutOfRange::Clamp,
        }),
    });
    Some((StageRef::Gather { gather, indices, index_type }, desc, out))
}

fn slice_stage(
    rng: &mut Rng,
    dtype: DType,
    shape: &[usize],
    strides: &[usize],
) -> Option<(StageRef, StageDesc, Vec<usize>)> {
    let r = shape.len();
    if rng.chance(50) && !matches!(dtype, DType::Bool | DType::BF16) {
        let (mut offsets, mut window, mut steps) = (vec![], vec![], vec![]);
        for &n in shape {
            if n == 0 {
                return None;
            }
            let size = rng.range(1, n as i64) as usize;
            offsets.push(rng.range(0, (n - size) as i64) as usize);
            window.push(size);
            let step = rng.range(1, 3);
            steps.push(if rng.chance(40) { -step } else { step });
        }
        let s = r::Slice1 {
            sizes: shape.to_vec(),
            strides: strides.to_vec(),
            offsets,
            window,
            steps,
            out_sizes: None,
            out_strides: None,
        };
        let out = s.output_shape();
        let desc = StageDesc::Slice(SliceWindow::DirectMl {
            offsets: generate::dims(&s.offsets),
            sizes: generate::dims(&s.window),
            strides: SignedDims::of(&s.steps),
        });
        return Some((StageRef::Slice1(s), desc, out));
    }
    let k = rng.range(1, r as i64) as usize;
    let mut order: Vec<usize> = (0..r).collect();
    for i in 0..r {
        order.swap(i, i + rng.below(r - i));
    }
    let (mut starts, mut ends, mut axes, mut steps) = (vec![], vec![], vec![], vec![]);
    for &axis in &order[..k] {
        let d = shape[axis] as i64;
        let step = rng.range(1, 2);
        let backwards = rng.chance(40);
        // Mostly a non-empty range (clamped ends included), sometimes anything.
        let (a, b) = (rng.range(-d - 1, d), rng.range(-d, d + 1));
        let (lo, hi) = if rng.chance(95) { (a.min(b), a.max(b).max(a.min(b) + 1)) } else { (a, b) };
        if backwards {
            starts.push(hi - 1);
            ends.push(lo - 1);
        } else {
            starts.push(lo);
            ends.push(hi);
        }
        axes.push(if rng.chance(30) { axis as i64 - r as i64 } else { axis as i64 });
        steps.push(if backwards { -step } else { step });
    }
    let x: Vec<usize> = (0..elements(shape)).collect();
    let (out, _) = r::onnx_slice(&x, shape, &starts, &ends, Some(&axes), Some(&steps));
    let desc = StageDesc::Slice(SliceWindow::Onnx {
        starts: SignedDims::of(&starts),
        ends: SignedDims::of(&ends),
        axes: Some(SignedDims::of(&axes)),
        steps: Some(SignedDims::of(&steps)),
    });
    Some((StageRef::OnnxSlice { starts, ends, axes: Some(axes), steps: Some(steps) }, desc, out))
}

/// The tensor of `sizes` and `strides` in `buffer`, as a packed vector.
fn packed<T: Copy>(buffer: &[T], sizes: &[usize], strides: &[usize]) -> Vec<T> {
    r::coords(sizes).iter().map(|c| buffer[r::offset(c, strides)]).collect()
}

impl ChainCase {
    /// Every gather's index values, in stage order.
    pub fn index_values(&self) -> Vec<(&[i128], DType)> {
        self.stages
            .iter()
            .filter_map(|s| match s {
                StageRef::Gather { indices, index_type, .. } => Some((indices.as_slice(), *index_type)),
                _ => None,
            })
            .collect()
    }

    /// Every gather's index buffer as bytes (one or two little-endian words per index).
    pub fn index_bytes(&self) -> Vec<Vec<u8>> {
        self.index_values()
            .iter()
            .map(|&(values, t)| {
                values
                    .iter()
                    .flat_map(|&v| match t {
                        DType::I64 | DType::U64 => (v as i64).to_le_bytes().to_vec(),
                        _ => (v as i32).to_le_bytes().to_vec(),
                    })
                    .collect()
            })
            .collect()
    }

    /// The stages run one by one on `data` (laid out by the data's strides).
    pub fn staged<T: Copy + Default>(&self, data: &[T]) -> Staged<T> {
        let (mut values, mut shape, mut strides) =
            (data.to_vec(), self.data_sizes.clone(), self.data_strides.clone());
        for (i, stage) in self.stages.iter().enumerate() {
            let (out_shape, out) = match stage {
                StageRef::Gather { gather, indices, .. } => {
                    let g = r::Gather {
                        data_sizes: shape.clone(),
                        data_strides: strides.clone(),
                        ..gather.clone()
                    };
                    match g.run(&values, indices) {
                        Outcome::Ok { shape, buffer } => (shape, buffer),
                        Outcome::Err { position, value } => {
                            return Staged::Err { stage: i + 1, position, value }
                        }
                    }
                }
                StageRef::Slice1(s) => {
                    let s = r::Slice1 { sizes: shape.clone(), strides: strides.clone(), ..s.clone() };
                    s.run(&values)
                }
                StageRef::OnnxSlice { starts, ends, axes, steps } => {
                    let x = packed(&values, &shape, &strides);
                    r::onnx_slice(&x, &shape, starts, ends, axes.as_deref(), steps.as_deref())
                }
            };
            strides = r::packed(&out_shape);
            values = out;
            shape = out_shape;
        }
        Staged::Ok { shape, buffer: values }
    }
}
