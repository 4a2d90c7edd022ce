//! `shoal shell`: HBase-shell-like commands against a server — interactive
//! (line editing, history in `~/.shoal_history`), one-shot (`-e`), or read
//! from a file or stdin. `parse` owns the syntax, `commands` what each
//! command does, `format` how results print, `help` the usage text.

mod commands;
mod format;
mod help;
mod parse;

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `shoal shell`.
#[derive(Debug, clap::Args)]
pub struct ShellArgs {
    /// Server gRPC address.
    #[arg(long, env = "SHOAL_ADDR", default_value = "127.0.0.1:7070")]
    addr: String,
    /// Run these commands (`;`-separated) and exit.
    #[arg(short = 'e', long = "execute")]
    execute: Option<String>,
    /// Read commands from this file (`-` = stdin) and exit.
    file: Option<PathBuf>,
}

/// Runs the shell; returns the process exit code (0 if every command
/// succeeded, 1 otherwise; interactive sessions exit 0).
pub async fn run(args: ShellArgs) -> anyhow::Result<i32> {
    let client = match shoal_client::Client::connect(&args.addr).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ERROR: {e}");
            return Ok(1);
        }
    };
    if let Some(cmds) = &args.execute {
        return Ok(run_lines(&client, cmds.lines().map(str::to_string)).await);
    }
    match &args.file {
        Some(p) if p.as_os_str() == "-" => Ok(run_lines(&client, stdin_lines()).await),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", p.display()))?;
            Ok(run_lines(&client, text.lines().map(str::to_string)).await)
        }
        None if !std::io::stdin().is_terminal() => Ok(run_lines(&client, stdin_lines()).await),
        None => interactive(&client).await,
    }
}

fn stdin_lines() -> impl Iterator<Item = String> {
    std::io::stdin().lock().lines().map_while(Result::ok)
}

/// Runs commands line by line; an error is printed and the next command runs.
async fn run_lines(client: &shoal_client::Client, lines: impl Iterator<Item = String>) -> i32 {
    let mut code = 0;
    for line in lines {
        match run_line(client, &line).await {
            Flow::Continue(true) => {}
            Flow::Continue(false) => code = 1,
            Flow::Exit => break,
        }
    }
    code
}

enum Flow {
    /// Go on; whether everything succeeded.
    Continue(bool),
    Exit,
}

async fn run_line(client: &shoal_client::Client, line: &str) -> Flow {
    let commands = match parse::parse_line(line) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ERROR: {e}");
            return Flow::Continue(false);
        }
    };
    let mut ok = true;
    for cmd in commands {
        if matches!(cmd.name.as_str(), "exit" | "quit") {
            return Flow::Exit;
        }
        let start = Instant::now();
        match commands::run(client, &cmd).await {
            Ok(out) => {
                let mut stdout = std::io::stdout().lock();
                let _ = write!(stdout, "{out}");
                if cmd.name != "help" {
                    let _ = writeln!(stdout, "Took {:.4} seconds", start.elapsed().as_secs_f64());
                }
                let _ = stdout.flush();
            }
            Err(e) => {
                eprintln!("ERROR: {e}");
                ok = false;
            }
        }
    }
    Flow::Continue(ok)
}

async fn interactive(client: &shoal_client::Client) -> anyhow::Result<i32> {
    let mut editor = rustyline::DefaultEditor::new()?;
    let history = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".shoal_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    println!("Shoal shell; 'help' lists the commands, 'exit' leaves.");
    loop {
        match editor.readline("shoal> ") {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                }
                if let Flow::Exit = run_line(client, &line).await {
                    break;
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => continue,
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(0)
}
