// A count with its noun, singular for one: "1 warning", "0 warnings", "2 NodePools".
export const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;
