//! `origami-calibrate`: measure a GPU with the CUDA microbenchmarks of `csrc/` and print the
//! five Origami parameters as JSON (issue 3). All logic lives in `origami::calibrate::cli`.

fn main() {
    std::process::exit(origami::calibrate::cli::main_with(
        std::env::args_os().collect(),
    ));
}
