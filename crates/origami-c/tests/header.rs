//! The committed C header is what cbindgen makes of this crate today: a change to the
//! interface that forgot to regenerate `include/origami.h` fails here. Regenerate with
//! `ORIGAMI_BLESS=1 cargo test --release -p origami-c --test header`.

use std::path::PathBuf;

#[test]
fn the_committed_header_is_current() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml reads");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let path = crate_dir.join("include/origami.h");
    if std::env::var_os("ORIGAMI_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("include/origami.h writes");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let first = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "include/origami.h is not what cbindgen generates (first difference at line {}); \
             regenerate with ORIGAMI_BLESS=1 cargo test --release -p origami-c --test header",
            first + 1
        );
    }
}
