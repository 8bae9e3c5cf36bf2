//! The one exit-code table of every origami tool, and the failure type the binaries
//! return: each error type of the library says which row of the table it belongs to
//! ([`ToExit::exit_code`]), and each binary ends through [`finish`], which prints one
//! `tool: error: message` line on stderr and exits with that code.

use std::fmt;

/// Process exit codes shared by `origami-select`, `-calibrate`, `-bench` and `-predict`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Exit {
    /// 0: the job was done.
    Ok,
    /// 1: something failed at run time (I/O, a kernel, a driver call).
    Runtime,
    /// 2: bad input or usage: an argument, a file, a value out of range.
    BadInput,
    /// 3: measurements did not settle (CoV above the threshold after the allowed runs).
    Unstable,
    /// 4: no GPU, or a CUDA library (driver, NVRTC, cuBLAS) missing.
    NoGpu,
}

impl Exit {
    /// Every row, in code order.
    pub const ALL: [Exit; 5] = [
        Exit::Ok,
        Exit::Runtime,
        Exit::BadInput,
        Exit::Unstable,
        Exit::NoGpu,
    ];

    /// The process exit status.
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Runtime => 1,
            Exit::BadInput => 2,
            Exit::Unstable => 3,
            Exit::NoGpu => 4,
        }
    }

    /// What the code means, as `--help` prints it.
    pub fn meaning(self) -> &'static str {
        match self {
            Exit::Ok => "ok",
            Exit::Runtime => "runtime failure",
            Exit::BadInput => "bad input",
            Exit::Unstable => "measurement unstable",
            Exit::NoGpu => "no GPU or CUDA library",
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}

/// An error that knows its row of the exit-code table.
pub trait ToExit {
    fn exit_code(&self) -> Exit;
}

/// A failure on its way out of a binary: the exit code and the one-line message.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub exit: Exit,
    pub msg: String,
}

impl Failure {
    pub fn new(exit: Exit, msg: impl fmt::Display) -> Failure {
        Failure {
            exit,
            msg: msg.to_string(),
        }
    }

    /// Exit 2: bad input or usage.
    pub fn bad(msg: impl fmt::Display) -> Failure {
        Failure::new(Exit::BadInput, msg)
    }

    /// Exit 1: a run-time failure.
    pub fn runtime(msg: impl fmt::Display) -> Failure {
        Failure::new(Exit::Runtime, msg)
    }

    /// Exit 1: writing the output failed.
    pub fn output(e: std::io::Error) -> Failure {
        Failure::runtime(format!("writing output: {e}"))
    }

    /// The same failure with `prefix: ` in front of its message.
    pub fn context(self, prefix: impl fmt::Display) -> Failure {
        Failure {
            exit: self.exit,
            msg: format!("{prefix}: {}", self.msg),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl<E: ToExit + fmt::Display> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure::new(e.exit_code(), e)
    }
}

/// End a binary: `Ok` exits 0; a failure prints `tool: error: message` on stderr and
/// exits with its code.
pub fn finish(tool: &str, r: Result<(), Failure>) -> std::process::ExitCode {
    match r {
        Ok(()) => Exit::Ok.into(),
        Err(f) => {
            eprint_error(tool, &f.msg);
            f.exit.into()
        }
    }
}

/// `tool: error: message` as one line: a line break or other control character that came
/// with the input the message quotes is shown escaped (`\n`), never as a second line.
pub fn error_line(tool: &str, msg: &dyn fmt::Display) -> String {
    let msg = msg.to_string();
    let msg: String = if msg.chars().any(char::is_control) {
        msg.chars()
            .flat_map(|c| {
                let escaped: Vec<char> = if c.is_control() {
                    c.escape_default().collect()
                } else {
                    vec![c]
                };
                escaped
            })
            .collect()
    } else {
        msg
    };
    format!("{tool}: error: {msg}")
}

/// Print [`error_line`] on stderr (best effort, like `eprintln!` without its panic).
pub fn eprint_error(tool: &str, msg: &dyn fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", error_line(tool, msg));
}

/// The exit-code lines for `--help`, for the codes a tool can return:
/// `Exit codes: 0 ok, 1 runtime failure, 2 bad input.`
pub fn help_line(codes: &[Exit]) -> String {
    let parts: Vec<String> = codes
        .iter()
        .map(|e| format!("{} {}", e.code(), e.meaning()))
        .collect();
    format!("Exit codes: {}.", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table() {
        let codes: Vec<u8> = Exit::ALL.iter().map(|e| e.code()).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4]);
        assert_eq!(
            help_line(&[Exit::Ok, Exit::Runtime, Exit::BadInput]),
            "Exit codes: 0 ok, 1 runtime failure, 2 bad input."
        );
    }

    #[test]
    fn failures_carry_their_code_and_context() {
        let f = Failure::bad("no such file").context("--shapes x.csv");
        assert_eq!(f.exit, Exit::BadInput);
        assert_eq!(f.to_string(), "--shapes x.csv: no such file");
    }

    #[test]
    fn an_error_is_one_line_whatever_it_quotes() {
        assert_eq!(error_line("t", &"plain"), "t: error: plain");
        assert_eq!(
            error_line("t", &"got: M,N\n1,2\r\t"),
            "t: error: got: M,N\\n1,2\\r\\t"
        );
        assert!(!error_line("t", &"a\u{0}b\u{1b}").contains(char::is_control));
    }
}
