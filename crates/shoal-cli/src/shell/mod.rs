//! `shoal shell`.

/// Arguments of `shoal shell`.
#[derive(Debug, clap::Args)]
pub struct ShellArgs {}

/// Runs the shell; returns the process exit code.
pub async fn run(_args: ShellArgs) -> anyhow::Result<i32> {
    anyhow::bail!("shell: being built")
}
