export { IsMoneyCurrency, isMoneyCurrency } from './currency';
