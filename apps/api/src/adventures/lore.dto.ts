import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { EXPORT_FORMATS, IMPORT_FORMATS } from '@chronicle/lore';

export class LoreImportQuery {
  @ApiPropertyOptional({
    enum: IMPORT_FORMATS,
    description: 'The file format; sniffed from the file when left out.',
  })
  @IsOptional()
  @IsIn(IMPORT_FORMATS, { message: `format must be one of ${IMPORT_FORMATS.join(', ')}` })
  format?: (typeof IMPORT_FORMATS)[number];

  @ApiPropertyOptional({
    enum: ['merge', 'replace'],
    description: 'merge (default) adds the cards; replace removes every card first.',
  })
  @IsOptional()
  @IsIn(['merge', 'replace'], { message: 'mode must be merge or replace' })
  mode?: 'merge' | 'replace';
}

export class LoreExportQuery {
  @ApiPropertyOptional({ enum: EXPORT_FORMATS })
  @IsIn(EXPORT_FORMATS, { message: `format must be one of ${EXPORT_FORMATS.join(', ')}` })
  format!: (typeof EXPORT_FORMATS)[number];
}
