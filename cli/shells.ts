// The shells `noderotation completion` writes for, and how each loads the script (its --help).
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export const COMPLETION_HELP = `
Load it in the current shell, or install it for every new one:
  bash  source <(noderotation completion bash)
        noderotation completion bash > ~/.local/share/bash-completion/completions/noderotation
  zsh   source <(noderotation completion zsh)          # after compinit
        noderotation completion zsh > "\${fpath[1]}/_noderotation"
  fish  noderotation completion fish | source
        noderotation completion fish > ~/.config/fish/completions/noderotation.fish
The script completes kubectl-noderotation too (the kubectl plugin).
`;
