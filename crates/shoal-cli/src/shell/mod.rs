//! `shoal shell`: HBase-shell-like commands against a server — interactive
//! (line editing, history in `~/.shoal_history`), one-shot (`-e`), or read
//! from a file or stdin. This module owns the session: where commands come
//! from, running them, timing and errors. `parser` owns the syntax, `input`
//! statements spanning lines, `commands` what each command does, `convert`
//! and `args` their arguments, `format` how results print, `help` the usage.

mod args;
mod commands;
mod convert;
mod format;
mod help;
mod input;
mod parser;
mod value;

use input::{Assembler, Fed};
use shoal_client::Client;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;
use value::Command;

/// Arguments of `shoal shell`.
#[derive(Debug, clap::Args)]
pub struct ShellArgs {
    /// Server gRPC address, or several comma-separated (the first that
    /// answers is used).
    #[arg(long, env = "SHOAL_ADDR", default_value = "127.0.0.1:7070")]
    addr: String,
    /// Run these commands (`;`-separated) and exit.
    #[arg(short = 'e', long = "execute")]
    execute: Option<String>,
    /// Read commands from this file (`-` = stdin) and exit.
    file: Option<PathBuf>,
    #[command(flatten)]
    credentials: crate::credentials::Credentials,
}

/// Runs the shell; returns the process exit code: 0 if every command
/// succeeded, 1 otherwise (interactive sessions exit 0).
pub async fn run(args: ShellArgs) -> anyhow::Result<i32> {
    let options = args
        .credentials
        .apply(shoal_client::ClientOptions::default())?;
    let mut session = Session {
        options,
        addr: args.addr,
        client: None,
        interactive: false,
    };
    if let Some(cmds) = &args.execute {
        let lines = cmds.lines().map(|l| Ok(l.to_string()));
        return Ok(session.run_lines(lines).await);
    }
    match &args.file {
        Some(p) if p.as_os_str() == "-" => Ok(session.run_lines(stdin_lines()).await),
        Some(p) => {
            let file = std::fs::File::open(p)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", p.display()))?;
            Ok(session
                .run_lines(byte_lines(std::io::BufReader::new(file)))
                .await)
        }
        None if !std::io::stdin().is_terminal() => Ok(session.run_lines(stdin_lines()).await),
        None => {
            session.interactive = true;
            session.interactive().await
        }
    }
}

/// Lines of `reader`; a line that is not UTF-8 is an error (its bytes are
/// written with `"\xNN"` escapes instead).
fn byte_lines(reader: impl BufRead) -> impl Iterator<Item = Result<String, String>> {
    reader.split(b'\n').map(|line| match line {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
            "a line is not UTF-8; write bytes as \"\\xNN\" escapes in double quotes".to_string()
        }),
        Err(e) => Err(format!("cannot read the input: {e}")),
    })
}

fn stdin_lines() -> impl Iterator<Item = Result<String, String>> {
    byte_lines(std::io::stdin().lock())
}

/// What to do after a statement.
enum Flow {
    /// Go on; whether everything succeeded.
    Continue(bool),
    /// Stop (`exit`, or stdout is gone); whether everything succeeded.
    Exit(bool),
}

/// A shell session: the server it talks to, connected on first use.
struct Session {
    addr: String,
    /// Token and TLS settings.
    options: shoal_client::ClientOptions,
    client: Option<Client>,
    interactive: bool,
}

impl Session {
    /// The client, connecting if not yet connected.
    async fn client(&mut self) -> Result<Client, shoal_client::ClientError> {
        if let Some(c) = &self.client {
            return Ok(c.clone());
        }
        let c = Client::connect_with(&self.addr, self.options.clone()).await?;
        self.client = Some(c.clone());
        Ok(c)
    }

    /// Runs statements from `lines`; an error is printed and the next
    /// statement runs. Returns the exit code.
    async fn run_lines(&mut self, lines: impl Iterator<Item = Result<String, String>>) -> i32 {
        let mut ok = true;
        let mut assembler = Assembler::default();
        for line in lines {
            let line = match line {
                Ok(l) => l,
                Err(e) => {
                    assembler.skip_line();
                    eprintln!("ERROR: line {}: {e}", assembler.line());
                    ok = false;
                    continue;
                }
            };
            let flow = match assembler.feed(&line) {
                Fed::More => continue,
                Fed::Ready(Err(e)) => {
                    eprintln!("ERROR: {e}");
                    Flow::Continue(false)
                }
                Fed::Ready(Ok(cmds)) => self.run_commands(&cmds).await,
            };
            match flow {
                Flow::Continue(good) => ok &= good,
                Flow::Exit(good) => return i32::from(!(ok && good)),
            }
        }
        if let Some(e) = assembler.finish() {
            eprintln!("ERROR: {e}");
            ok = false;
        }
        i32::from(!ok)
    }

    /// Runs the commands of one statement in order.
    async fn run_commands(&mut self, cmds: &[Command]) -> Flow {
        let mut ok = true;
        for cmd in cmds {
            if matches!(cmd.name.as_str(), "exit" | "quit") {
                return Flow::Exit(ok);
            }
            match self.run_command(cmd).await {
                Ok(()) => {}
                Err(commands::CommandError::Output(e))
                    if e.kind() == std::io::ErrorKind::BrokenPipe =>
                {
                    return Flow::Exit(false);
                }
                Err(
                    e @ commands::CommandError::Client(shoal_client::ClientError::Connect {
                        ..
                    }),
                ) if !self.interactive => {
                    // Nothing else can work either.
                    eprintln!("ERROR: {e}");
                    return Flow::Exit(false);
                }
                Err(e) => {
                    eprintln!("ERROR: {e}");
                    ok = false;
                }
            }
        }
        Flow::Continue(ok)
    }

    /// Runs one command, its output to stdout followed by the time taken.
    async fn run_command(&mut self, cmd: &Command) -> Result<(), commands::CommandError> {
        let start = Instant::now();
        let mut out = std::io::BufWriter::new(std::io::stdout());
        if commands::run_local(cmd, &mut out)? {
            out.flush()?;
            return Ok(());
        }
        let interactive = self.interactive;
        let work = async {
            let client = self.client().await?;
            commands::run(&client, cmd, &mut out).await
        };
        let result = if interactive {
            // Ctrl-C abandons the running command, not the shell.
            tokio::select! {
                r = work => r,
                _ = tokio::signal::ctrl_c() => Err(commands::CommandError::Interrupted),
            }
        } else {
            work.await
        };
        // Output already written stays printed, even if the command failed.
        out.flush()?;
        result?;
        writeln!(out, "Took {:.4} seconds", start.elapsed().as_secs_f64())?;
        out.flush()?;
        Ok(())
    }

    /// The interactive loop: prompt, line editing, history.
    async fn interactive(&mut self) -> anyhow::Result<i32> {
        let mut editor = rustyline::DefaultEditor::new()?;
        let history = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".shoal_history"));
        if let Some(h) = &history {
            let _ = editor.load_history(h);
        }
        println!(
            "Shoal shell {} ({}); 'help' lists the commands, 'exit' leaves.",
            env!("CARGO_PKG_VERSION"),
            self.addr
        );
        let mut assembler = Assembler::default();
        loop {
            let prompt = if assembler.is_open() {
                "shoal* "
            } else {
                "shoal> "
            };
            match editor.readline(prompt) {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = editor.add_history_entry(line.as_str());
                    }
                    let flow = match assembler.feed(&line) {
                        Fed::More => continue,
                        Fed::Ready(Err(e)) => {
                            eprintln!("ERROR: {e}");
                            continue;
                        }
                        Fed::Ready(Ok(cmds)) => self.run_commands(&cmds).await,
                    };
                    if let Flow::Exit(_) = flow {
                        break;
                    }
                }
                Err(rustyline::error::ReadlineError::Interrupted) => assembler.clear(),
                Err(rustyline::error::ReadlineError::Eof) => break,
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(h) = &history {
            // History is a convenience: an unwritable home is not an error.
            let _ = editor.save_history(h);
        }
        Ok(0)
    }
}
