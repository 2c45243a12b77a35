-- Argo CD health of a noderotation.io MaintenancePlan composed by Crossplane through function-noderotation
-- (docs/gitops.md). Runs in Argo CD's Lua VM without the standard libraries (only base and table).
--   Suspended    Crossplane's crossplane.io/paused annotation is "true", or the defaults suspend every
--                governed NodePool and no rule resumes one.
--   Progressing  Crossplane has not yet reconciled this generation, or a composed RotationPolicy is not ready.
--   Degraded     PlanValid is False (the function's reason and message: the field and the fix) or Synced is
--                False (Crossplane could not run the pipeline or apply its result; the existing
--                RotationPolicies stay as they were).
--   Healthy      Synced and Ready are True.
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

local function suspended(spec)
  if spec == nil or spec.defaults == nil or spec.defaults.suspend ~= true then
    return false
  end
  for _, rule in ipairs(spec.rules or {}) do
    if rule.overrides ~= nil and rule.overrides.suspend == false then
      return false
    end
  end
  return true
end

local annotations = obj.metadata.annotations
if annotations ~= nil and annotations["crossplane.io/paused"] == "true" then
  hs.status = "Suspended"
  hs.message = "Crossplane reconciliation is paused (annotation crossplane.io/paused)"
  return hs
end
if suspended(obj.spec) then
  hs.status = "Suspended"
  hs.message = "spec.defaults.suspend is true: no new rotation starts in the NodePools this plan governs"
  return hs
end

local generation = obj.metadata.generation or 0
local conditions = obj.status ~= nil and obj.status.conditions or nil
local valid = condition(conditions, "PlanValid")
local synced = condition(conditions, "Synced")
local ready = condition(conditions, "Ready")

if valid ~= nil and valid.status == "False" then
  hs.status = "Degraded"
  hs.message = (valid.reason or "Invalid") .. ": " .. (valid.message or "")
  return hs
end
if synced ~= nil and synced.status == "False" then
  hs.status = "Degraded"
  hs.message = (synced.reason or "ReconcileError") .. ": " .. (synced.message or "")
  return hs
end
if synced == nil or synced.status ~= "True" or (synced.observedGeneration or 0) < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for Crossplane to compose generation " .. tostring(generation)
  return hs
end
if ready == nil or ready.status ~= "True" then
  hs.status = "Progressing"
  hs.message = "Waiting for the composed RotationPolicies to be ready"
  return hs
end

hs.status = "Healthy"
local pools = obj.status.nodePools or {}
if #pools == 1 then
  hs.message = "Composes 1 RotationPolicy"
else
  hs.message = "Composes " .. tostring(#pools) .. " RotationPolicies"
end
return hs
