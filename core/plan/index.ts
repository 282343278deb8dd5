export { planAndCompare, renderAgainst } from './against';
export { renderPlan } from './format';
export { type PlanRequest } from './plan-request';
export { PRESETS } from './presets';
export { BUILT_IN_PRICES, PRICE_KEYS } from './prices';
