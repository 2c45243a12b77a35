// A count with its noun, singular for one: "1 warning", "0 warnings", "2 NodePools"; an irregular plural given
// as the third argument: count(2, 'node life', 'node lives').
export const count = (n: number, noun: string, plural = `${noun}s`): string => `${n} ${n === 1 ? noun : plural}`;
