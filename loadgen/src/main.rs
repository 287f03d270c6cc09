//! perflab-load: a wrk2-compatible open-loop HTTP load generator.

mod batching;
mod cli;
mod clock;
mod collector;
mod cpu_usage;
mod early_stop;
mod flags;
mod hdr_log;
mod histogram;
mod http;
mod json_summary;
mod net;
mod options;
mod partition;
mod poller;
mod recording;
mod run;
mod schedule;
mod script;
mod signals;
mod start_at;
mod units;
mod url;
mod worker;
mod wrk_format;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = run::main_with_args(&args);
    // Lua's io.write goes through C stdio: flush it before leaving.
    // SAFETY: fflush(NULL) flushes all C output streams.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    std::process::exit(code);
}
