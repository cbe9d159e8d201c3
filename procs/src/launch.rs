//! How a shell is started: through `unshare` (a user namespace of its
//! own) and the sandbox helper, with exactly the environment of its
//! `ChildEnv`.

use crate::child_env::ChildEnv;
use crate::contain;

/// `shell -c script` with exactly `env`, through `unshare` in a user
/// namespace of its own when `user_namespace` says so
/// ([`contain::user_namespace_for`]), then through the sandbox helper's
/// command line `helper` ([`crate::sandbox::Policy::helper_command`]; empty:
/// no sandbox).
pub(crate) fn shell_command(
    env: &ChildEnv,
    user_namespace: bool,
    helper: &[std::ffi::OsString],
    script: &str,
) -> std::io::Result<std::process::Command> {
    let argv = launcher(user_namespace, helper)?;
    let Some((program, args)) = argv.split_first() else {
        return Ok(env.shell_command(script));
    };
    let mut cmd = env.command(program);
    cmd.args(args)
        .arg(crate::child_env::shell())
        .arg("-c")
        .arg(script);
    Ok(cmd)
}

/// What a shell is started through: `unshare` (a user namespace), then
/// the sandbox helper; empty for neither. The user namespace comes first:
/// inside the sandbox `unshare` could not write its id maps.
pub(crate) fn launcher(
    user_namespace: bool,
    helper: &[std::ffi::OsString],
) -> std::io::Result<Vec<std::ffi::OsString>> {
    let mut argv = Vec::new();
    if user_namespace {
        let (program, args) = contain::unshare_prefix()?;
        argv.push(program.into());
        argv.extend(args.iter().map(Into::into));
    }
    argv.extend(helper.iter().cloned());
    Ok(argv)
}
