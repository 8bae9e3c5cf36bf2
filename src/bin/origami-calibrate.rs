//! `origami-calibrate`: measure a GPU with the CUDA microbenchmarks of `csrc/` and print the
//! five Origami parameters as JSON. All logic lives in `origami::calibrate::cli`.

fn main() -> std::process::ExitCode {
    origami::calibrate::cli::main_with(std::env::args_os().collect()).into()
}
