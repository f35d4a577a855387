//! A chain's last stage may convert its result to the model's element type: `f32`, `f16` or
//! `bf16`, each element computed in f32 as `x * scale[c] + offset[c]`, where `c` is the
//! element's coordinate along one named dimension (the channel). One value in `scale` or
//! `offset` stands for every channel. This is the step after the crop in an image pipeline,
//! `(x / 255 - mean[c]) / std[c]`, done in the kernel that crops instead of in a second pass.

use crate::dtype::DType;
use crate::error::{ConvertKey, Operand, RuleError};
use crate::layout::TensorLayout;
use crate::tensor::{self, OutputDecl};

/// The most channels a convert stage names: scale and offset are constants of the kernel,
/// chosen per element by its channel.
pub const MAX_CHANNELS: usize = 16;

/// Per-channel f32 values, kept as their bits so a descriptor stays `Eq + Hash` and can be
/// built in a `const`. Holds the first [`MAX_CHANNELS`] values and how many were given (more
/// break a rule, reported when the stage is planned).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Channels {
    given: usize,
    bits: [u32; MAX_CHANNELS],
}

impl Channels {
    /// The values as bits (what `chain!` writes).
    pub const fn from_bits(values: &[u32]) -> Channels {
        let mut bits = [0; MAX_CHANNELS];
        let mut i = 0;
        while i < values.len() && i < MAX_CHANNELS {
            bits[i] = values[i];
            i += 1;
        }
        Channels { given: values.len(), bits }
    }

    pub fn of(values: &[f32]) -> Channels {
        let bits: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
        Channels::from_bits(&bits)
    }

    /// How many values were given.
    pub const fn len(&self) -> usize {
        self.given
    }

    pub const fn is_empty(&self) -> bool {
        self.given == 0
    }

    /// The value of channel `c`: the one value when one was given (and for a `c` past those
    /// kept).
    pub fn get(&self, c: usize) -> f32 {
        let i = if self.given == 1 { 0 } else { c };
        f32::from_bits(self.bits.get(i).copied().unwrap_or(0))
    }

    /// The kept values as bits.
    pub fn bits(&self) -> &[u32] {
        &self.bits[..self.given.min(MAX_CHANNELS)]
    }
}

impl std::fmt::Debug for Channels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let values: Vec<f32> = self.bits().iter().map(|&b| f32::from_bits(b)).collect();
        write!(f, "{values:?}")?;
        if self.given > MAX_CHANNELS {
            write!(f, " (of {})", self.given)?;
        }
        Ok(())
    }
}

/// A convert stage as written: `convert { to: f32, dim: 1, scale: [..], offset: [..] }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConvertStage {
    pub to: DType,
    /// The channel dimension of the shape the stage receives (negative counts from the end).
    pub dim: i64,
    pub scale: Channels,
    pub offset: Channels,
}

/// A convert stage that passed its rules.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvertPlan {
    pub from: DType,
    pub to: DType,
    /// The channel dimension, normalized.
    pub dim: usize,
    /// Channels with their own scale and offset: the dimension's size, or 1 when both lists
    /// hold one value.
    pub channels: usize,
    pub scale: Channels,
    pub offset: Channels,
    pub input: TensorLayout,
    pub output: TensorLayout,
}

impl ConvertPlan {
    /// Channel `c`'s `(scale, offset)`.
    pub fn channel(&self, c: usize) -> (f32, f32) {
        (self.scale.get(c), self.offset.get(c))
    }
}

/// Element types a convert stage writes.
pub const CONVERT_TO: [DType; 3] = [DType::F32, DType::F16, DType::BF16];

/// Whether a convert stage reads `dtype`: integers and floats of up to 32 bits.
pub const fn converts_from(dtype: DType) -> bool {
    !matches!(dtype, DType::Bool | DType::F64 | DType::I64 | DType::U64)
}

impl ConvertStage {
    /// The rules of a convert stage on what it receives (`input`, of element type `from`),
    /// writing `output` (the chain's declared output, or packed).
    pub fn plan(
        &self,
        from: DType,
        input: TensorLayout,
        output: Option<&OutputDecl>,
    ) -> Result<ConvertPlan, RuleError> {
        if !CONVERT_TO.contains(&self.to) {
            return Err(RuleError::ConvertTo { to: self.to });
        }
        if !converts_from(from) {
            return Err(RuleError::ConvertFrom { from });
        }
        let rank = input.rank();
        let dim = match self.dim {
            // A scalar has one channel, and no dimension to name: `dim` is not read.
            _ if rank == 0 && self.scale.len() == 1 && self.offset.len() == 1 => 0,
            d if d >= 0 && (d as usize) < rank => d as usize,
            d if d < 0 && d.unsigned_abs() as usize <= rank => rank - d.unsigned_abs() as usize,
            dim => return Err(RuleError::ConvertDim { dim, rank }),
        };
        let size = input.sizes.get(dim).copied().unwrap_or(1);
        for (key, values) in [(ConvertKey::Scale, &self.scale), (ConvertKey::Offset, &self.offset)] {
            let given = values.len();
            if given != 1 && given != size {
                return Err(RuleError::ConvertChannels { key, given, dim, size });
            }
            if given > MAX_CHANNELS {
                return Err(RuleError::ConvertManyChannels { key, given, max: MAX_CHANNELS });
            }
            if let Some(index) = values.bits().iter().position(|&b| !f32::from_bits(b).is_finite()) {
                return Err(RuleError::ConvertValue { key, index, bits: values.bits()[index] });
            }
        }
        let channels = if self.scale.len() == 1 && self.offset.len() == 1 { 1 } else { size };
        let output = match output {
            None => TensorLayout::packed(input.sizes),
            Some(decl) => {
                if let Some(output) = decl.dtype.filter(|&t| t != self.to) {
                    return Err(RuleError::ConvertOutput { to: self.to, output });
                }
                tensor::check_output_decl(self.to, decl, input.sizes)?;
                let layout = tensor::layout(Operand::Output, decl.sizes, decl.strides)?;
                tensor::check_output_layout(&layout)?;
                layout
            }
        };
        tensor::check_addressable(Operand::Output, &output, self.to.size())?;
        if self.to.size() == 2 && !output.is_empty() && word_rows(&output, false).is_none() {
            return Err(RuleError::ConvertWords { to: self.to, strides: output.strides.to_vec() });
        }
        Ok(ConvertPlan {
            from,
            to: self.to,
            dim,
            channels,
            scale: self.scale,
            offset: self.offset,
            input,
            output,
        })
    }
}

/// How many of `output`'s innermost dimensions (in memory order, those of more than one
/// element) make the rows a 16-bit result is written in: rows whose elements pair into whole
/// 32-bit words, each word written by one invocation. The innermost dimension must be
/// contiguous; a row is a packed run of innermost dimensions whose length and every outer
/// stride are even, or, with no outer dimension left, the whole output (its last word then
/// half full). `lead_apart`: the leading dimension (a `_` count) is never in a row. `None`: no
/// such rows.
pub fn word_rows(output: &TensorLayout, lead_apart: bool) -> Option<usize> {
    let mut dims: Vec<(usize, usize, bool)> = (0..output.rank())
        .filter(|&d| output.sizes[d] > 1)
        .map(|d| (output.sizes[d], output.strides[d], lead_apart && d == 0))
        .collect();
    // Memory order, outermost first; a leading count stays first (its stride is the largest).
    dims.sort_by_key(|&(_, stride, lead)| (std::cmp::Reverse(lead), std::cmp::Reverse(stride)));
    let Some(&(_, inner_stride, inner_lead)) = dims.last() else { return Some(0) };
    if inner_stride != 1 || inner_lead {
        return None;
    }
    let n = dims.len();
    let mut run = 1;
    let mut span = dims[n - 1].0;
    while run < n && !dims[n - run - 1].2 && dims[n - run - 1].1 == span {
        span = span.checked_mul(dims[n - run - 1].0)?;
        run += 1;
    }
    let mut len = 1usize;
    for j in 1..=run {
        len = len.checked_mul(dims[n - j].0)?;
        if len % 2 == 0 && dims[..n - j].iter().all(|d| d.1 % 2 == 0) {
            return Some(j);
        }
    }
    (run == n).then_some(n)
}
