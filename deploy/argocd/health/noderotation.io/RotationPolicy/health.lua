-- Argo CD health of a noderotation.io RotationPolicy, from the controller's status (docs/gitops.md).
-- Runs in Argo CD's Lua VM without the standard libraries (only base and table): no string functions.
--   Suspended    spec.suspend is true: no new rotation starts (Karpenter's expireAfter still applies).
--   Progressing  the controller has not yet reported on this generation of the spec.
--   Degraded     Ready is False: the spec is invalid, two policies tie for a NodePool, or a schedule
--                cannot work; the controller's message names the field and the fix.
--   Healthy      Ready is True. A rotation in flight (Reconciling True) stays Healthy, with its message:
--                rotations are routine and can take hours, and sync waves must not wait for them.
local hs = {}

-- The condition of a type, or nil. (Each health script stands alone in argocd-cm: nothing can be shared.)
local function condition(conditions, type)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "spec.suspend is true: no new rotation starts in the NodePools this policy governs"
  return hs
end

local generation = obj.metadata.generation or 0
local status = obj.status
if status == nil or status.observedGeneration == nil or status.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the noderotation controller to observe generation " .. tostring(generation)
  return hs
end

local ready = condition(status.conditions, "Ready")
if ready == nil or ready.status == "Unknown" then
  hs.status = "Progressing"
  hs.message = "Waiting for the noderotation controller to report Ready"
  return hs
end
if ready.status == "False" then
  hs.status = "Degraded"
  hs.message = (ready.reason or "NotReady") .. ": " .. (ready.message or "")
  return hs
end

hs.status = "Healthy"
local reconciling = condition(status.conditions, "Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  hs.message = reconciling.message or "Rotating"
else
  hs.message = ready.message or "Accepted"
end
return hs
