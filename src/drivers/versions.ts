// The agent versions each driver is tested with (the pinned devDependencies; opencode's: the version its plugin
// and dependency stubs are written for). On their own, with no imports: `replay --help` names them, and the CLI
// should not load the drivers to say so.

export const claudeCodeVersion = '2.1.328';
export const codexVersion = '0.169.0';
export const geminiVersion = '0.61.0';
export const opencodeVersion = '1.18.33';
export const qwenVersion = '0.24.4';
