// The CEL rules of our schemas (x-kubernetes-validations) enforce at admission what plain OpenAPI cannot
// express. The apiserver runs the CEL; offline validation runs these equivalents, keyed by each rule's
// `x-check` name. A test asserts every rule in every schema names a check that exists here.

type Obj = Record<string, unknown>;

export const checks: Record<string, (self: Obj) => boolean> = {
  selectorRequirementValues: (self) => {
    const values = Array.isArray(self.values) ? self.values : [];
    return self.operator === 'In' || self.operator === 'NotIn' ? values.length > 0 : values.length === 0;
  },
  freezeEndAfterStart: (self) => Date.parse(String(self.end)) > Date.parse(String(self.start)),
  prePullDisabled: (self) => self.enabled !== true,
  exactlyOneTarget: (self) => (self.nodePoolSelector !== undefined) !== (self.nodePools !== undefined),
  exactlyOneRuleTarget: (self) => (self.nodePoolSelector !== undefined) !== (self.nodePools !== undefined),
  excludeWithoutOverrides: (self) => !(self.exclude === true && self.overrides !== undefined),
};
