//! Tensor maps for the bulk tensor copy engine (TMA, compute capability 9.0+): the CUDA
//! driver's `cuTensorMapEncodeTiled` on a row-major matrix of 16-bit elements, as the
//! Hopper kernel (csrc/hopper_gemm.cu) reads A, B and C (CUDA Driver API reference,
//! "Tensor Map Object Management"). The map is encoded on the host once per buffer and
//! passed to the kernel by value ([`TensorMap`], `KernelArgs::tensor_map`).

use cudarc::driver::sys;
use cudarc::driver::DriverError;

use super::context::TensorMap;
use super::probe::{self, Library};
use super::GpuError;

/// A 2-D map: a `rows` x `cols` row-major matrix (`cols` contiguous), copied in boxes of
/// `box_rows` x `box_cols`, swizzled over the box row's bytes (128, 64 or 32: the shared-
/// memory layout the kernel's wgmma descriptors and epilogue expect), elements outside the
/// matrix read as zeros and not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapShape {
    pub rows: u64,
    pub cols: u64,
    pub box_rows: u32,
    pub box_cols: u32,
}

impl MapShape {
    /// Why the driver would refuse this map for 16-bit elements, if so (its documented
    /// rules: row pitch a multiple of 16 bytes, boxes of at most 256 per dimension whose
    /// rows span the swizzle's 32, 64 or 128 bytes).
    pub fn violation(&self) -> Option<String> {
        let pitch = self.cols * 2;
        if pitch % 16 != 0 {
            return Some(format!(
                "a row of {} elements is {pitch} bytes, not a multiple of 16 (TMA's rule)",
                self.cols
            ));
        }
        if self.box_rows == 0 || self.box_rows > 256 {
            return Some(format!("box of {} rows (1 to 256)", self.box_rows));
        }
        if !matches!(self.box_cols, 16 | 32 | 64) {
            return Some(format!(
                "box rows of {} elements: 16, 32 or 64 (the 32, 64 or 128-byte swizzle)",
                self.box_cols
            ));
        }
        None
    }

    fn swizzle(&self) -> sys::CUtensorMapSwizzle {
        match self.box_cols {
            64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            _ => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        }
    }
}

/// Encode the map of the matrix at device address `addr` (fp16 or, with `bf16`, bf16).
pub fn encode_2d(addr: u64, shape: &MapShape, bf16: bool) -> Result<TensorMap, GpuError> {
    if let Some(why) = shape.violation() {
        return Err(GpuError::Unsupported(format!("tensor map: {why}")));
    }
    probe::require(&[Library::Driver])?;
    let dims = [shape.cols, shape.rows];
    let strides = [shape.cols * 2];
    let boxes = [shape.box_cols, shape.box_rows];
    let elems = [1u32, 1];
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::uninit();
    let dtype = if bf16 {
        sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    } else {
        sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    };
    // SAFETY: every array has the rank's length (strides: rank - 1), the map is written by
    // the driver before it is read, and `addr` is a device allocation the caller keeps
    // alive while the map is used.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            dtype,
            2,
            addr as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elems.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            shape.swizzle(),
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(GpuError::Driver {
            during: format!("encoding a tensor map ({shape:?})"),
            source: DriverError(r),
        });
    }
    // SAFETY: initialized by the successful call above; 128 bytes either way.
    let map = unsafe { map.assume_init() };
    // SAFETY: CUtensorMap is 16 u64 (128 bytes), plain data.
    let bytes: [u8; 128] = unsafe { std::mem::transmute(map) };
    Ok(TensorMap(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drivers_rules_are_checked_before_the_call() {
        let ok = MapShape {
            rows: 4100,
            cols: 7168,
            box_rows: 128,
            box_cols: 64,
        };
        assert_eq!(ok.violation(), None);
        let odd = MapShape { cols: 4097, ..ok };
        assert!(odd.violation().unwrap().contains("not a multiple of 16"));
        let tall = MapShape {
            box_rows: 512,
            ..ok
        };
        assert!(tall.violation().unwrap().contains("1 to 256"));
        let wide = MapShape {
            box_cols: 128,
            ..ok
        };
        assert!(wide.violation().unwrap().contains("16, 32 or 64"));
        assert!(matches!(
            encode_2d(0, &odd, false),
            Err(GpuError::Unsupported(m)) if m.contains("tensor map")
        ));
        assert_eq!(std::mem::size_of::<TensorMap>(), 128);
        assert_eq!(std::mem::align_of::<TensorMap>(), 64);
        assert_eq!(std::mem::size_of::<sys::CUtensorMap>(), 128);
    }
}
