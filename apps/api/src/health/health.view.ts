import { ApiProperty } from '@nestjs/swagger';

export class CheckView {
  @ApiProperty()
  ok!: boolean;
  @ApiProperty()
  ms!: number;
  @ApiProperty({ required: false })
  error?: string;
}

export class ReadyChecksView {
  @ApiProperty({ type: () => CheckView })
  postgres!: CheckView;
  @ApiProperty({ type: () => CheckView })
  redis!: CheckView;
}

export class ReadyLeaderView {
  @ApiProperty()
  holder!: string;
  @ApiProperty()
  live!: boolean;
}

export class ReadinessView {
  @ApiProperty({ enum: ['ready', 'unavailable'] })
  status!: 'ready' | 'unavailable';
  @ApiProperty({ type: () => ReadyChecksView })
  checks!: ReadyChecksView;
  @ApiProperty({ type: () => ReadyLeaderView, nullable: true })
  leader!: ReadyLeaderView | null;
}

export class LivenessView {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
}

