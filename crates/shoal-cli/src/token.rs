//! `shoal token`: makes a bearer token and the token file line that lets
//! it in (only the token's SHA-256 is kept on the server).

use anyhow::Context;
use shoal_server::security::tokens;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `shoal token`.
#[derive(Debug, clap::Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    command: TokenCommand,
}

#[derive(Debug, clap::Subcommand)]
enum TokenCommand {
    /// A new random token for USER: prints the token (give it to the user,
    /// it is not shown again) and appends `USER sha256:…` to --file (or
    /// prints the line).
    New {
        /// The user the token names.
        user: String,
        /// The server's token file (`auth.tokens`) to append the line to;
        /// created with mode 0600 if missing. Send the server SIGHUP after.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Also write the token itself to this file (mode 0600), for
        /// `--token-file` or `auth.server_token`.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The token file line for a token read from stdin.
    Hash {
        /// The user the token names.
        user: String,
    },
}

fn private_file(path: &PathBuf, append: bool) -> anyhow::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create(true)
        .append(append)
        .write(true)
        .truncate(!append)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("{}", path.display()))
}

/// Runs `shoal token`.
pub fn run(args: TokenArgs) -> anyhow::Result<()> {
    match args.command {
        TokenCommand::New { user, file, out } => {
            anyhow::ensure!(
                tokens::valid_user(&user),
                "user {user:?}: 1 to 128 letters, digits and `_ - . @`"
            );
            let token = tokens::generate();
            let line = tokens::line(&user, &token);
            match &file {
                Some(f) => {
                    writeln!(private_file(f, true)?, "{line}")
                        .with_context(|| format!("{}", f.display()))?;
                    eprintln!("appended to {}: {line}", f.display());
                }
                None => eprintln!("token file line: {line}"),
            }
            if let Some(o) = &out {
                writeln!(private_file(o, false)?, "{token}")
                    .with_context(|| format!("{}", o.display()))?;
                eprintln!("token written to {}", o.display());
            }
            println!("{token}");
        }
        TokenCommand::Hash { user } => {
            anyhow::ensure!(
                tokens::valid_user(&user),
                "user {user:?}: 1 to 128 letters, digits and `_ - . @`"
            );
            let mut token = String::new();
            std::io::stdin().read_line(&mut token)?;
            let token = token.trim();
            anyhow::ensure!(!token.is_empty(), "no token on stdin");
            println!("{}", tokens::line(&user, token));
        }
    }
    Ok(())
}
