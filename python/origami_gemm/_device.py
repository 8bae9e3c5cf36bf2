"""The GPU in hand, read through PyTorch (`Selector(device="torch")`): fills the fields of
origami's `DeviceProps` (crates/origami-core/src/hw/derive.rs) from
`torch.cuda.get_device_properties(0)`, the CUDA runtime's `cudaDeviceProp` as PyTorch
exposes it. Torch is imported only here, only when asked.

Field by field (the torch attribute, then the unit change):

- name <- `name`
- compute_capability <- (`major`, `minor`)
- sm_count <- `multi_processor_count`
- l2_bytes <- `L2_cache_size`
- smem_per_block_optin_bytes <- `shared_memory_per_block_optin`
- registers_per_sm <- `regs_per_multiprocessor`
- sm_clock_mhz <- `clock_rate` (kHz) / 1000
- mem_clock_mhz <- `memory_clock_rate` (kHz) / 1000
- mem_bus_width_bits <- `memory_bus_width`

A PyTorch build that lacks an attribute (older ones have no clocks, CUDA 13 reports no
clock rate) leaves that field out; the extension then takes it from the preset whose
name matches the device's (the rule origami-select uses, `hw::presets::preset_for_device`:
"H100" -> h100-sxm, ...). When a field is missing and no preset matches, no numbers are
invented: the reader warns and returns None, and the selector falls back to origami's
default preset, as origami-select does without a GPU (its `notice` says so).
"""
import warnings

# DeviceProps field -> (torch attribute, divisor)
TORCH_FIELDS = {
    "sm_count": ("multi_processor_count", 1),
    "l2_bytes": ("L2_cache_size", 1),
    "smem_per_block_optin_bytes": ("shared_memory_per_block_optin", 1),
    "registers_per_sm": ("regs_per_multiprocessor", 1),
    "sm_clock_mhz": ("clock_rate", 1000),
    "mem_clock_mhz": ("memory_clock_rate", 1000),
    "mem_bus_width_bits": ("memory_bus_width", 1),
}


def props_from_torch(p):
    """The DeviceProps dict of one `torch.cuda.get_device_properties` result; fields the
    object lacks (or reports as 0) are left out."""
    out = {"name": str(p.name), "compute_capability": (int(p.major), int(p.minor))}
    for field, (attr, div) in TORCH_FIELDS.items():
        v = getattr(p, attr, None)
        if v is None or v <= 0:
            continue
        out[field] = v / div if div != 1 else int(v)
    return out


def missing_fields(props):
    """DeviceProps fields absent from `props`."""
    return [f for f in TORCH_FIELDS if f not in props]


def torch_device_props():
    """GPU 0's DeviceProps as a dict, or None (with a warning) when torch sees no CUDA GPU
    or a field is missing and no preset matches the device's name."""
    import torch

    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        warnings.warn("origami_gemm: device='torch' but torch sees no CUDA GPU; "
                      "using origami's default preset", RuntimeWarning, stacklevel=3)
        return None
    props = props_from_torch(torch.cuda.get_device_properties(0))
    missing = missing_fields(props)
    if missing:
        from . import _core

        if not _core.preset_matches(props["name"]):
            warnings.warn(f"origami_gemm: torch does not report {', '.join(missing)} for "
                          f"'{props['name']}' and no preset matches it; using origami's "
                          "default preset (pass gpu= or a device dict)",
                          RuntimeWarning, stacklevel=3)
            return None
    return props
