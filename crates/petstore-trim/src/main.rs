//! `petstore-trim MODULE…`: trims each built module in place
//! (`petstore_trim::trim`), and says what it saved.

fn main() -> std::process::ExitCode {
    let mut failed = false;
    for path in std::env::args().skip(1) {
        let trimmed = std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|module| {
                let trimmed = petstore_trim::trim(&module).ok_or("not a core module")?;
                std::fs::write(&path, &trimmed).map_err(|e| e.to_string())?;
                Ok((module.len(), trimmed.len()))
            });
        match trimmed {
            Ok((before, after)) => println!("{path}: {before} → {after} bytes"),
            Err(e) => {
                eprintln!("petstore-trim: {path}: {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}
