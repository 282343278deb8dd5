export { renderPlan } from './format';
export { INITIAL_BURST_CREDIT_GIB, type PlanResult, READ_METERING_FACTOR, computePlan } from './model';
export { PRESETS } from './presets';
export { BUILT_IN_PRICES, PRICE_KEYS, PriceError, resolvePrices } from './prices';
export { type InputSpec, type Step, WorkloadError, parseStep, readWorkloadFile } from './workload';
