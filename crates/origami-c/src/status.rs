//! Status codes of the C ABI: origami's exit-code table (`origami_core::exit`, the codes
//! the command-line tools exit with) first, with the same numbers, then the codes only a
//! library call can return (a NULL argument, a buffer too small, a panic caught at the
//! boundary).

use origami_core::exit::Exit;

/// What an `origami_*` call returns. 0 to 4 are the command-line tools' exit codes;
/// 16 and up belong to the C interface alone.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrigamiStatus {
    /// 0: done.
    Ok = 0,
    /// 1: a run-time failure (the tools' row for I/O that fails; here only an `--explain`
    /// document that cannot be serialized).
    Runtime = 1,
    /// 2: bad input: an unknown family, model, type or preset, a hardware file that cannot
    /// be read or parsed, a shape the family cannot run, a string that is not UTF-8 (the
    /// message is origami-select's).
    BadInput = 2,
    /// 3: measurements did not settle (not returned by the selection calls; kept so that
    /// the table is the tools' table).
    Unstable = 3,
    /// 4: no GPU or CUDA library (not returned by the selection calls, which load none).
    NoGpu = 4,
    /// 16: a pointer argument that must not be NULL was NULL.
    NullArgument = 16,
    /// 17: a caller-owned buffer is too small for the answer (the needed size is reported
    /// where the call has a `needed` or `written` argument).
    BufferTooSmall = 17,
    /// 18: an internal error: a panic inside the library, caught at the boundary.
    Internal = 18,
}

impl OrigamiStatus {
    /// Every code, in numeric order.
    pub(crate) const ALL: [OrigamiStatus; 8] = [
        OrigamiStatus::Ok,
        OrigamiStatus::Runtime,
        OrigamiStatus::BadInput,
        OrigamiStatus::Unstable,
        OrigamiStatus::NoGpu,
        OrigamiStatus::NullArgument,
        OrigamiStatus::BufferTooSmall,
        OrigamiStatus::Internal,
    ];

    /// The code as the C caller sees it.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The code's name in words.
    pub fn meaning(self) -> &'static str {
        match self {
            OrigamiStatus::NullArgument => "NULL argument",
            OrigamiStatus::BufferTooSmall => "buffer too small",
            OrigamiStatus::Internal => "internal error",
            s => Exit::ALL
                .iter()
                .find(|e| i32::from(e.code()) == s.code())
                .map(|e| e.meaning())
                .unwrap_or("unknown"),
        }
    }
}

impl From<Exit> for OrigamiStatus {
    fn from(e: Exit) -> Self {
        match e {
            Exit::Ok => OrigamiStatus::Ok,
            Exit::Runtime => OrigamiStatus::Runtime,
            Exit::BadInput => OrigamiStatus::BadInput,
            Exit::Unstable => OrigamiStatus::Unstable,
            Exit::NoGpu => OrigamiStatus::NoGpu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tools_rows_keep_their_numbers() {
        for e in Exit::ALL {
            assert_eq!(OrigamiStatus::from(e).code(), i32::from(e.code()));
            assert_eq!(OrigamiStatus::from(e).meaning(), e.meaning());
        }
        let codes: Vec<i32> = OrigamiStatus::ALL.iter().map(|s| s.code()).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4, 16, 17, 18]);
    }
}
