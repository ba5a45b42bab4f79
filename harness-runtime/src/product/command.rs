//! What a scenario says about the product program it starts.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The command line of a product, for [`Live::start_product`](crate::Live::start_product).
///
/// ```ignore
/// let product = live
///     .start_product(&agent, ProductCommand::new("node").arg(script).env("APP_MODE", "test"))
///     .await?;
/// ```
///
/// The product runs in its agent's workspace (unless [`current_dir`](Self::current_dir) says
/// otherwise) with the runner's environment, minus `OPENCODE_*` and the harness's own variables,
/// plus:
/// - `LIVE_AGENT_URL`: the agent's forwarded URL ([`AGENT_URL_ENV`](super::AGENT_URL_ENV));
/// - `LIVE_AGENT_DIRECTORY`: the agent's workspace ([`AGENT_DIRECTORY_ENV`](super::AGENT_DIRECTORY_ENV));
/// - `HOME` and `TMPDIR`: directories of its own in the agent's root;
/// - what [`env`](Self::env) adds, last.
///
/// Under the sandbox it writes beneath its agent's root only, connects to its agent's port only,
/// and may read, list and execute, besides the system's directories: its program (found in
/// `PATH` for a bare name; an npm package's whole package, as for agents), and its script — the
/// first argument that names an existing file — with the script's directory and every
/// `node_modules` directory and `package.json` file above it: what Node resolves imports from,
/// so a script under a checkout reaches the packages `npm ci` installed there, read-only, and
/// nothing else of the checkout. Keep a product's script in a directory of its own: that whole
/// directory is readable. Later arguments grant nothing; what else it needs goes in
/// [`read_only`](Self::read_only), [`writable`](Self::writable) and [`connect`](Self::connect).
#[derive(Clone, Debug)]
pub struct ProductCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(String, Option<String>)>,
    pub(crate) current_dir: Option<PathBuf>,
    pub(crate) read_only: Vec<PathBuf>,
    pub(crate) writable: Vec<PathBuf>,
    pub(crate) connect: Vec<u16>,
    pub(crate) name: Option<String>,
}

impl ProductCommand {
    /// Runs `program`: a name looked up in `PATH`, or a path (absolute, or relative to the
    /// runner's working directory, which is the test crate's directory under `cargo test`).
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            read_only: Vec::new(),
            writable: Vec::new(),
            connect: Vec::new(),
            name: None,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets a variable of the product's environment, after the harness's own (so it may
    /// override `HOME`, `TMPDIR` or `LIVE_AGENT_URL`). A value under a name that looks like a
    /// credential (KEY, TOKEN, SECRET, PASSWORD, …) is redacted wherever it appears.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), Some(value.into())));
        self
    }

    /// Removes a variable from the product's environment.
    pub fn env_remove(mut self, name: impl Into<String>) -> Self {
        self.env.push((name.into(), None));
        self
    }

    /// Runs the product in `dir` instead of its agent's workspace. Under the sandbox the
    /// product may not list or read it unless it is readable for another reason.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.current_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Lets the sandboxed product read, list and execute beneath `path` (a directory), or read
    /// `path` (a file). A path that does not exist when the product starts grants nothing.
    pub fn read_only(mut self, path: impl Into<PathBuf>) -> Self {
        self.read_only.push(path.into());
        self
    }

    /// Lets the sandboxed product also write beneath `path` (create, change, remove), besides
    /// its agent's root. A path that does not exist when the product starts grants nothing.
    pub fn writable(mut self, path: impl Into<PathBuf>) -> Self {
        self.writable.push(path.into());
        self
    }

    /// Lets the sandboxed product connect to TCP `port` on any address, besides its agent's.
    pub fn connect(mut self, port: u16) -> Self {
        self.connect.push(port);
        self
    }

    /// Names the product in messages and on the report (default: the program's file name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The name messages use: [`name`](Self::name), else the program's file name.
    pub(crate) fn display_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| {
            Path::new(&self.program)
                .file_name()
                .unwrap_or(&self.program)
                .to_string_lossy()
                .into_owned()
        })
    }

    /// The program and its arguments as one line (unredacted: the caller redacts).
    pub(crate) fn line(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|part| {
                let part = part.to_string_lossy();
                if part.is_empty() || part.contains(char::is_whitespace) {
                    format!("{part:?}")
                } else {
                    part.into_owned()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_quotes_what_has_spaces_and_the_name_defaults_to_the_file_name() {
        let command =
            ProductCommand::new("/usr/bin/node")
                .arg("app.mjs")
                .args(["--say", "hello world", ""]);
        assert_eq!(
            command.line(),
            r#"/usr/bin/node app.mjs --say "hello world" """#
        );
        assert_eq!(command.display_name(), "node");
        assert_eq!(command.name("sdk-app").display_name(), "sdk-app");
    }
}
