//! The worked examples of the source documents (the ONNX, OpenVINO and DirectML operator pages' own), as data: the tests of
//! every crate, the dtype sweep and the CUDA catalogue all check against this one table.
//!
//! Values are written as `f64` (every example's values are exact in every type they are run
//! in) and indices as `i64`.

use crate::dims::{Dims, SignedDims};
use crate::dtype::DType;
use crate::gather::GatherDesc;
use crate::rules::GatherRules;
use crate::slice::{SliceDesc, SliceWindow};
use crate::tensor::TensorDecl;

/// A gather example: descriptor, inputs and the output the source document prints.
#[derive(Clone, Copy, Debug)]
pub struct GatherSeed {
    pub name: &'static str,
    pub rules: GatherRules,
    pub data_sizes: &'static [usize],
    pub data: &'static [f64],
    pub index_sizes: &'static [usize],
    pub indices: &'static [i64],
    pub axis: i64,
    pub batch_dims: Option<i64>,
    pub index_dims: Option<usize>,
    pub out_sizes: &'static [usize],
    pub out: &'static [f64],
}

impl GatherSeed {
    /// The descriptor with data of type `data` and indices of type `index`.
    pub fn desc(&self, data: DType, index: DType) -> GatherDesc {
        GatherDesc {
            form: crate::GatherForm::Axis,
            rules: self.rules,
            data: TensorDecl::packed(data, Dims::of(self.data_sizes)),
            indices: TensorDecl::packed(index, Dims::of(self.index_sizes)),
            axis: self.axis,
            batch_dims: self.batch_dims,
            index_dims: self.index_dims,
            out_of_range: None,
            output: None,
            feature_level: None,
            dynamic_leading: false,
        }
    }

    /// Whether the example's values are all integers (it then runs in integer types too).
    pub fn integral(&self) -> bool {
        self.data.iter().chain(self.out).all(|v| v.fract() == 0.0)
    }
}

/// A slice example (DirectML SLICE1).
#[derive(Clone, Copy, Debug)]
pub struct SliceSeed {
    pub name: &'static str,
    pub input_sizes: &'static [usize],
    pub input: &'static [f64],
    pub offsets: &'static [usize],
    pub sizes: &'static [usize],
    pub strides: &'static [i64],
    pub out_sizes: &'static [usize],
    pub out: &'static [f64],
}

impl SliceSeed {
    pub fn desc(&self, dtype: DType) -> SliceDesc {
        SliceDesc {
            input: TensorDecl::packed(dtype, Dims::of(self.input_sizes)),
            window: SliceWindow::DirectMl {
                offsets: Dims::of(self.offsets),
                sizes: Dims::of(self.sizes),
                strides: SignedDims::of(self.strides),
            },
            output: None,
            feature_level: None,
            dynamic_leading: false,
        }
    }
}

const IOTA: [f64; 40] = {
    let mut v = [0.0; 40];
    let mut i = 0;
    while i < 40 {
        v[i] = (i + 1) as f64;
        i += 1;
    }
    v
};

/// `1..=n`.
const fn iota(n: usize) -> &'static [f64] {
    IOTA.split_at(n).0
}

const fn gather(
    name: &'static str,
    rules: GatherRules,
    data: (&'static [usize], &'static [f64]),
    indices: (&'static [usize], &'static [i64]),
    axis: i64,
    out: (&'static [usize], &'static [f64]),
) -> GatherSeed {
    GatherSeed {
        name,
        rules,
        data_sizes: data.0,
        data: data.1,
        index_sizes: indices.0,
        indices: indices.1,
        axis,
        batch_dims: None,
        index_dims: None,
        out_sizes: out.0,
        out: out.1,
    }
}

const fn batch(seed: GatherSeed, batch_dims: i64) -> GatherSeed {
    GatherSeed { batch_dims: Some(batch_dims), ..seed }
}

const fn index_dims(seed: GatherSeed, k: usize) -> GatherSeed {
    GatherSeed { index_dims: Some(k), ..seed }
}

use GatherRules::{DirectMl, Onnx, OpenVino};

/// Seed 000 (DirectML GATHER), 002 (OpenVINO Gather-8) and 003 (ONNX Gather). DirectML's
/// example 3 is given with `IndexDimensions 1`, which reproduces its printed `{3,2}`; as
/// written (2), its own formula refuses it (README, "DirectML's example 3").
pub const GATHERS: &[GatherSeed] = &[
    index_dims(
        gather(
            "directml_1_remap_1d",
            DirectMl,
            (&[4], &[11., 12., 13., 14.]),
            (&[5], &[3, 1, 3, 0, 2]),
            0,
            (&[5], &[14., 12., 14., 11., 13.]),
        ),
        1,
    ),
    index_dims(
        gather(
            "directml_2_rows",
            DirectMl,
            (&[3, 2], iota(6)),
            (&[1, 4], &[0, 1, 1, 2]),
            0,
            (&[4, 2], &[1., 2., 3., 4., 3., 4., 5., 6.]),
        ),
        1,
    ),
    index_dims(
        gather(
            "directml_3_swap_columns",
            DirectMl,
            (&[3, 2], iota(6)),
            (&[1, 2], &[1, 0]),
            1,
            (&[3, 2], &[2., 1., 4., 3., 6., 5.]),
        ),
        1,
    ),
    index_dims(
        gather(
            "directml_4_nested_indices",
            DirectMl,
            (&[1, 3, 3], iota(9)),
            (&[1, 1, 2], &[0, 2]),
            2,
            (&[3, 1, 2], &[1., 3., 4., 6., 7., 9.]),
        ),
        2,
    ),
    index_dims(
        gather(
            "directml_5_nested_axis_1",
            DirectMl,
            (&[1, 3, 2], iota(6)),
            (&[1, 2, 2], &[0, 1, 1, 2]),
            1,
            (&[2, 2, 2], &[1., 2., 3., 4., 3., 4., 5., 6.]),
        ),
        2,
    ),
    gather("openvino_1", OpenVino, (&[5], iota(5)), (&[3], &[0, 0, 4]), 0, (&[3], &[1., 1., 5.])),
    batch(
        gather(
            "openvino_2_batch_1",
            OpenVino,
            (&[2, 5], iota(10)),
            (&[2, 3], &[0, 0, 4, 4, 0, 0]),
            1,
            (&[2, 3], &[1., 1., 5., 10., 6., 6.]),
        ),
        1,
    ),
    batch(
        gather(
            "openvino_3_batch_2",
            OpenVino,
            (&[2, 2, 5], iota(20)),
            (&[2, 2, 3], &[0, 0, 4, 4, 0, 0, 1, 2, 4, 4, 3, 2]),
            2,
            (&[2, 2, 3], &[1., 1., 5., 10., 6., 6., 12., 13., 15., 20., 19., 18.]),
        ),
        2,
    ),
    batch(
        gather(
            "openvino_4_batch_1_axis_2",
            OpenVino,
            (&[2, 1, 5, 4], iota(40)),
            (&[2, 3], &[1, 2, 4, 4, 3, 2]),
            2,
            (
                &[2, 1, 3, 4],
                &[
                    5., 6., 7., 8., 9., 10., 11., 12., 17., 18., 19., 20., 37., 38., 39., 40., 33., 34., 35.,
                    36., 29., 30., 31., 32.,
                ],
            ),
        ),
        1,
    ),
    batch(
        gather(
            "openvino_5_negative_batch",
            OpenVino,
            (&[2, 5], iota(10)),
            (&[2, 3], &[0, 0, 4, 4, 0, 0]),
            1,
            (&[2, 3], &[1., 1., 5., 10., 6., 6.]),
        ),
        -1,
    ),
    gather(
        "openvino_6_negative_indices",
        OpenVino,
        (&[5], iota(5)),
        (&[3], &[0, -2, -1]),
        0,
        (&[3], &[1., 4., 5.]),
    ),
    gather(
        "openvino_7_out_of_range_zero",
        OpenVino,
        (&[5], iota(5)),
        (&[3], &[3, 10, -20]),
        0,
        (&[3], &[4., 0., 0.]),
    ),
    gather(
        "onnx_1_axis_0",
        Onnx,
        (&[3, 2], &[1.0, 1.2, 2.3, 3.4, 4.5, 5.7]),
        (&[2, 2], &[0, 1, 1, 2]),
        0,
        (&[2, 2, 2], &[1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7]),
    ),
    gather(
        "onnx_2_axis_1",
        Onnx,
        (&[3, 3], &[1.0, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9]),
        (&[1, 2], &[0, 2]),
        1,
        (&[3, 1, 2], &[1.0, 1.9, 2.3, 3.9, 4.5, 5.9]),
    ),
];

/// Seed 001 (DirectML SLICE1): the input `{1,1,4,4}` = `1..=16`.
pub const SLICES: &[SliceSeed] = &[
    SliceSeed {
        name: "slice1_1_positive_strides",
        input_sizes: &[1, 1, 4, 4],
        input: iota(16),
        offsets: &[0, 0, 0, 1],
        sizes: &[1, 1, 4, 3],
        strides: &[1, 1, 2, 2],
        out_sizes: &[1, 1, 2, 2],
        out: &[2., 4., 10., 12.],
    },
    SliceSeed {
        name: "slice1_2_negative_stride",
        input_sizes: &[1, 1, 4, 4],
        input: iota(16),
        offsets: &[0, 0, 0, 1],
        sizes: &[1, 1, 4, 3],
        strides: &[1, 1, -2, 2],
        out_sizes: &[1, 1, 2, 2],
        out: &[14., 16., 6., 8.],
    },
];

/// The gather example named `name` (`None`: no example has that name).
pub fn gather_seed(name: &str) -> Option<&'static GatherSeed> {
    GATHERS.iter().find(|s| s.name == name)
}

/// The slice example named `name` (`None`: no example has that name).
pub fn slice_seed(name: &str) -> Option<&'static SliceSeed> {
    SLICES.iter().find(|s| s.name == name)
}
