//! Checks that each URL given on the command line answers 2xx within 5 seconds.

use std::process::ExitCode;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(5)).build();
    let mut failed = 0;
    for url in std::env::args().skip(1) {
        let start = Instant::now();
        match agent.get(&url).call() {
            Ok(resp) => println!("{:<40} {} in {:?}", url, resp.status(), start.elapsed()),
            Err(e) => {
                println!("{:<40} FAILED: {}", url, e);
                failed += 1;
            }
        }
    }
    if failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
