export { renderPlan } from './format';
export { INITIAL_BURST_CREDIT_GIB, type PlanResult, READ_METERING_FACTOR } from './model';
export { type PlanRequest, planWorkload } from './plan-request';
export { PRESETS } from './presets';
export { BUILT_IN_PRICES, PRICE_KEYS } from './prices';
