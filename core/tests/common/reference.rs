//! A naive reference written straight from the formulas of docs/rules.md, apart from the kernel
//! generator (it never calls `stridex-core`'s planning), so it can catch the generator's
//! mistakes. Tensors are (sizes, strides) over flat buffers; coordinates are walked row-major.

#![allow(dead_code)]

/// Advances row-major coordinates; false after the last.
pub fn next(c: &mut [usize], sizes: &[usize]) -> bool {
    for i in (0..c.len()).rev() {
        c[i] += 1;
        if c[i] < sizes[i] {
            return true;
        }
        c[i] = 0;
    }
    false
}

pub fn offset(c: &[usize], strides: &[usize]) -> usize {
    c.iter().zip(strides).map(|(a, b)| a * b).sum()
}

pub fn packed(sizes: &[usize]) -> Vec<usize> {
    let mut s = vec![1; sizes.len()];
    for i in (0..sizes.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * sizes[i + 1].max(1);
    }
    s
}

/// `1 + sum((size - 1) * stride)`, 0 when empty.
pub fn min_len(sizes: &[usize], strides: &[usize]) -> usize {
    if sizes.contains(&0) {
        return 0;
    }
    1 + sizes.iter().zip(strides).map(|(n, s)| (n - 1) * s).sum::<usize>()
}

/// Every coordinate of `sizes`, row-major (one empty coordinate for rank 0).
pub fn coords(sizes: &[usize]) -> Vec<Vec<usize>> {
    if sizes.contains(&0) {
        return vec![];
    }
    let mut all = vec![];
    let mut c = vec![0; sizes.len()];
    loop {
        all.push(c.clone());
        if !next(&mut c, sizes) {
            return all;
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    Onnx,
    OpenVino,
    DirectMl,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Error,
    Zero,
    Clamp,
}

/// A gather as docs/rules.md states it (`onnx-gather-shape`, `openvino-shape`, `dml-gather-shape`).
#[derive(Clone, Debug)]
pub struct Gather {
    pub rules: Rules,
    pub data_sizes: Vec<usize>,
    pub data_strides: Vec<usize>,
    pub index_sizes: Vec<usize>,
    pub index_strides: Vec<usize>,
    pub axis: i64,
    pub batch_dims: i64,
    pub index_dims: usize,
    pub policy: Policy,
    pub out_strides: Option<Vec<usize>>,
    pub signed_indices: bool,
}

pub enum Outcome<T> {
    /// The output buffer (laid out by the output strides, padding zero) and its shape.
    Ok { shape: Vec<usize>, buffer: Vec<T> },
    /// `error` policy: the first bad index, row-major over the indices tensor, and its value.
    Err { position: Vec<usize>, value: i128 },
}

impl Gather {
    pub fn axis(&self) -> usize {
        let r = self.data_sizes.len() as i64;
        (if self.axis < 0 { self.axis + r } else { self.axis }) as usize
    }

    pub fn batch(&self) -> usize {
        let q = self.index_sizes.len() as i64;
        (if self.batch_dims < 0 { self.batch_dims + q } else { self.batch_dims }) as usize
    }

    /// The indices that take part: DirectML drops the leading DimensionCount - IndexDimensions.
    fn index_view(&self) -> (Vec<usize>, Vec<usize>) {
        match self.rules {
            Rules::DirectMl => {
                let d = self.index_sizes.len();
                (
                    self.index_sizes[d - self.index_dims..].to_vec(),
                    self.index_strides[d - self.index_dims..].to_vec(),
                )
            }
            _ => (self.index_sizes.clone(), self.index_strides.clone()),
        }
    }

    /// `data.shape[:axis] + indices.shape[b:] + data.shape[axis+1:]`.
    pub fn formula_shape(&self) -> Vec<usize> {
        let (a, b) = (self.axis(), self.batch());
        let (view, _) = self.index_view();
        let mut s = self.data_sizes[..a].to_vec();
        s.extend_from_slice(&view[b..]);
        s.extend_from_slice(&self.data_sizes[a + 1..]);
        s
    }

    /// ONNX and OpenVINO: the formula. DirectML: right-aligned into DimensionCount by trimming
    /// or adding leading 1s.
    pub fn output_shape(&self) -> Vec<usize> {
        let f = self.formula_shape();
        if self.rules != Rules::DirectMl {
            return f;
        }
        let d = self.data_sizes.len();
        let lead = f.iter().take_while(|&&n| n == 1).count();
        let t = &f[lead..];
        let mut out = vec![1; d.saturating_sub(t.len())];
        out.extend_from_slice(&t[t.len().saturating_sub(d)..]);
        out
    }

    /// Whether a DirectML descriptor fits (seed 000's rule and right alignment).
    pub fn directml_fits(&self) -> bool {
        let d = self.data_sizes.len();
        let original = d - self.data_sizes.iter().take_while(|&&n| n == 1).count();
        let f = self.formula_shape();
        let trimmed = f.len() - f.iter().take_while(|&&n| n == 1).count();
        original + self.index_dims <= d + 1 && trimmed <= d
    }

    pub fn run<T: Copy + Default>(&self, data: &[T], indices: &[i128]) -> Outcome<T> {
        let (a, b) = (self.axis(), self.batch());
        let (view_sizes, view_strides) = self.index_view();
        let m = view_sizes.len();
        let s = self.data_sizes[a] as i128;
        let shape = self.output_shape();
        let out_strides = self.out_strides.clone().unwrap_or_else(|| packed(&shape));
        let mut buffer = vec![T::default(); min_len(&shape, &out_strides)];
        let formula = self.formula_shape();
        if formula.contains(&0) {
            return Outcome::Ok { shape, buffer };
        }
        if self.policy == Policy::Error {
            for c in coords(&self.index_sizes) {
                let v = indices[offset(&c, &self.index_strides)];
                if v < -s || v >= s {
                    return Outcome::Err { position: c, value: v };
                }
            }
        }
        // Formula coordinates p map to output coordinates by right alignment (DirectML only
        // adds or removes leading 1s).
        let rank_gap = shape.len() as i64 - formula.len() as i64;
        for p in coords(&formula) {
            // indices[p_0..p_{b-1}, i_b..i_{M-1}]
            let mut ic = p[..b].to_vec();
            ic.extend_from_slice(&p[a..a + m - b]);
            let v = indices[offset(&ic, &view_strides)];
            let value = if (-s..s).contains(&v) {
                let n = if v < 0 { v + s } else { v };
                Some(n as usize)
            } else {
                match self.policy {
                    Policy::Clamp if s > 0 => Some(if v < 0 { 0 } else { s as usize - 1 }),
                    _ => None,
                }
            };
            // data[p_0..p_{axis-1}, idx, p_{axis+1}..]
            let out_c: Vec<usize> = if rank_gap >= 0 {
                let mut c = vec![0; rank_gap as usize];
                c.extend_from_slice(&p);
                c
            } else {
                p[(-rank_gap) as usize..].to_vec()
            };
            let o = offset(&out_c, &out_strides);
            buffer[o] = match value {
                Some(idx) => {
                    let mut dc = p[..a].to_vec();
                    dc.push(idx);
                    dc.extend_from_slice(&p[a + m - b..]);
                    data[offset(&dc, &self.data_strides)]
                }
                None => T::default(),
            };
        }
        Outcome::Ok { shape, buffer }
    }
}

/// GatherElements as docs/rules.md states it (`elements-formula`): the output has the indices'
/// shape, and `out[c] = data[c with c[axis] = indices[c]]`.
#[derive(Clone, Debug)]
pub struct GatherElements {
    pub data_sizes: Vec<usize>,
    pub data_strides: Vec<usize>,
    pub index_sizes: Vec<usize>,
    pub index_strides: Vec<usize>,
    pub axis: i64,
    pub policy: Policy,
    pub out_strides: Option<Vec<usize>>,
}

impl GatherElements {
    pub fn axis(&self) -> usize {
        let r = self.data_sizes.len() as i64;
        (if self.axis < 0 { self.axis + r } else { self.axis }) as usize
    }

    pub fn run<T: Copy + Default>(&self, data: &[T], indices: &[i128]) -> Outcome<T> {
        let a = self.axis();
        let s = self.data_sizes[a] as i128;
        let shape = self.index_sizes.clone();
        let out_strides = self.out_strides.clone().unwrap_or_else(|| packed(&shape));
        let mut buffer = vec![T::default(); min_len(&shape, &out_strides)];
        let all = coords(&shape);
        if self.policy == Policy::Error {
            for c in &all {
                let v = indices[offset(c, &self.index_strides)];
                if v < -s || v >= s {
                    return Outcome::Err { position: c.clone(), value: v };
                }
            }
        }
        for c in all {
            let v = indices[offset(&c, &self.index_strides)];
            let value = if (-s..s).contains(&v) {
                Some(if v < 0 { v + s } else { v } as usize)
            } else {
                match self.policy {
                    Policy::Clamp if s > 0 => Some(if v < 0 { 0 } else { s as usize - 1 }),
                    _ => None,
                }
            };
            buffer[offset(&c, &out_strides)] = match value {
                Some(i) => {
                    let mut dc = c.clone();
                    dc[a] = i;
                    data[offset(&dc, &self.data_strides)]
                }
                None => T::default(),
            };
        }
        Outcome::Ok { shape, buffer }
    }
}

/// GatherND as docs/rules.md states it (`nd-formula`): the indices' last dimension holds tuples
/// of `k` coordinates into data dimensions `b..b+k`; `out[i.., rest..] = data[i[..b],
/// idx[i..][0], .., idx[i..][k-1], rest..]`, out of shape `indices[..-1] + data[b+k..]`.
#[derive(Clone, Debug)]
pub struct GatherNd {
    pub data_sizes: Vec<usize>,
    pub data_strides: Vec<usize>,
    pub index_sizes: Vec<usize>,
    pub index_strides: Vec<usize>,
    pub batch_dims: usize,
    pub policy: Policy,
    pub out_strides: Option<Vec<usize>>,
}

impl GatherNd {
    pub fn shape(&self) -> Vec<usize> {
        let (q, b) = (self.index_sizes.len(), self.batch_dims);
        let k = self.index_sizes[q - 1];
        let mut shape = self.index_sizes[..q - 1].to_vec();
        shape.extend_from_slice(&self.data_sizes[b + k..]);
        shape
    }

    pub fn run<T: Copy + Default>(&self, data: &[T], indices: &[i128]) -> Outcome<T> {
        let (q, b) = (self.index_sizes.len(), self.batch_dims);
        let k = self.index_sizes[q - 1];
        let shape = self.shape();
        let out_strides = self.out_strides.clone().unwrap_or_else(|| packed(&shape));
        let mut buffer = vec![T::default(); min_len(&shape, &out_strides)];
        let all = coords(&shape);
        // Every tuple is read when the output has an element.
        if self.policy == Policy::Error && !all.is_empty() {
            for c in coords(&self.index_sizes) {
                let s = self.data_sizes[b + c[q - 1]] as i128;
                let v = indices[offset(&c, &self.index_strides)];
                if v < -s || v >= s {
                    return Outcome::Err { position: c, value: v };
                }
            }
        }
        for c in all {
            let mut dc: Vec<usize> = c[..b].to_vec();
            let mut zero = false;
            for j in 0..k {
                let mut ic = c[..q - 1].to_vec();
                ic.push(j);
                let v = indices[offset(&ic, &self.index_strides)];
                let s = self.data_sizes[b + j] as i128;
                let at = if (-s..s).contains(&v) {
                    Some(if v < 0 { v + s } else { v } as usize)
                } else {
                    match self.policy {
                        Policy::Clamp if s > 0 => Some(if v < 0 { 0 } else { s as usize - 1 }),
                        _ => None,
                    }
                };
                match at {
                    Some(i) => dc.push(i),
                    None => {
                        zero = true;
                        dc.push(0);
                    }
                }
            }
            dc.extend_from_slice(&c[q - 1..]);
            buffer[offset(&c, &out_strides)] =
                if zero { T::default() } else { data[offset(&dc, &self.data_strides)] };
        }
        Outcome::Ok { shape, buffer }
    }
}

/// A DirectML SLICE1 slice as docs/rules.md states it (`slice1-copy`).
#[derive(Clone, Debug)]
pub struct Slice1 {
    pub sizes: Vec<usize>,
    pub strides: Vec<usize>,
    pub offsets: Vec<usize>,
    pub window: Vec<usize>,
    pub steps: Vec<i64>,
    pub out_sizes: Option<Vec<usize>>,
    pub out_strides: Option<Vec<usize>>,
}

impl Slice1 {
    /// `MaxCopiedElements[i] = 1 + (size[i] - 1) / |stride[i]|` unless declared.
    pub fn output_shape(&self) -> Vec<usize> {
        self.out_sizes.clone().unwrap_or_else(|| {
            self.window
                .iter()
                .zip(&self.steps)
                .map(|(&n, &s)| 1 + (n - 1) / s.unsigned_abs() as usize)
                .collect()
        })
    }

    pub fn run<T: Copy + Default>(&self, input: &[T]) -> (Vec<usize>, Vec<T>) {
        let shape = self.output_shape();
        let out_strides = self.out_strides.clone().unwrap_or_else(|| packed(&shape));
        let mut buffer = vec![T::default(); min_len(&shape, &out_strides)];
        for c in coords(&shape) {
            // CopyStart[i] = offset[i] + (stride[i] < 0 ? size[i] - 1 : 0)
            let ic: Vec<usize> = (0..c.len())
                .map(|i| {
                    let start = self.offsets[i] as i64
                        + if self.steps[i] < 0 { self.window[i] as i64 - 1 } else { 0 };
                    (start + self.steps[i] * c[i] as i64) as usize
                })
                .collect();
            buffer[offset(&c, &out_strides)] = input[offset(&ic, &self.strides)];
        }
        (shape, buffer)
    }
}

/// ONNX Slice-13 on a packed tensor, as its operator document states it.
pub fn onnx_slice<T: Copy>(
    x: &[T],
    shape: &[usize],
    starts: &[i64],
    ends: &[i64],
    axes: Option<&[i64]>,
    steps: Option<&[i64]>,
) -> (Vec<usize>, Vec<T>) {
    let r = shape.len();
    let mut ranges: Vec<Vec<usize>> = shape.iter().map(|&n| (0..n).collect()).collect();
    for k in 0..starts.len() {
        let axis = axes.map_or(k as i64, |a| a[k]);
        let axis = if axis < 0 { axis + r as i64 } else { axis } as usize;
        let dim = shape[axis] as i64;
        let step = steps.map_or(1, |s| s[k]);
        let fix = |v: i64| if v < 0 { v + dim } else { v };
        let mut picked = vec![];
        if dim == 0 {
        } else if step > 0 {
            let (mut i, end) = (fix(starts[k]).clamp(0, dim), fix(ends[k]).clamp(0, dim));
            while i < end {
                picked.push(i as usize);
                i += step;
            }
        } else {
            let (mut i, end) = (fix(starts[k]).clamp(0, dim - 1), fix(ends[k]).clamp(-1, dim - 1));
            while i > end {
                picked.push(i as usize);
                i += step;
            }
        }
        ranges[axis] = picked;
    }
    let out_shape: Vec<usize> = ranges.iter().map(Vec::len).collect();
    let strides = packed(shape);
    let data = coords(&out_shape)
        .into_iter()
        .map(|c| {
            let ic: Vec<usize> = c.iter().enumerate().map(|(i, &j)| ranges[i][j]).collect();
            x[offset(&ic, &strides)]
        })
        .collect();
    (out_shape, data)
}
