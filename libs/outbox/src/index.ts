export { OutboxModule } from './outbox.module';
export { EventsRepository } from './events.repository';
export { EventView, EventListView, EVENT_TYPES } from './event.view';
export type { EventType } from './event.view';
export { installJobQueue, Task } from './job-queue';
export { countDeliveryAttempts, DELIVERY_ATTEMPT_RESULTS, readDeliveryBacklog } from './delivery-statistics';
export type { DeliveryAttemptResult, DeliveryBacklog } from './delivery-statistics';
