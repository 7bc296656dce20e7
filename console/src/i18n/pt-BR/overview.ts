import type { WordsOf } from '../../ui/i18n.js'
import type { overview as en } from '../en/overview.js'

export const overview: WordsOf<typeof en> = {
  'overview.firstTenant': 'Crie seu primeiro tenant',
  'overview.firstTenantHelp':
    'Só existe o tenant da plataforma. Um tenant é uma organização com seus próprios usuários, papéis e chaves; crie um com seu primeiro administrador, que poderá então entrar aqui.',
  'overview.createFirstTenant': 'Criar o primeiro tenant',
  'overview.yourTenant': 'Seu tenant:',
  'overview.counts': 'Números',
  'overview.activeSessions': 'Sessões ativas',
  'overview.logins24h': 'Logins nas últimas 24 h',
  'overview.failed24h': 'Logins com falha nas últimas 24 h',
  'overview.locked24h': 'Identificadores bloqueados nas últimas 24 h',
  'overview.logins': 'Logins',
  'overview.perHour': 'Logins por hora, últimas 24 horas',
  'overview.hourlyChart': 'o gráfico por hora',
  'overview.perDay': 'Logins por dia, últimos 30 dias',
  'overview.dailyChart': 'o gráfico por dia',
  'overview.failing': 'Endereços com mais falhas',
  'overview.addresses': 'os endereços',
  'overview.noFailed': 'Nenhum login com falha nas últimas 24 horas.',
  'overview.address': 'Endereço',
  'overview.failures': 'Logins com falha (24 h)',
  'overview.lastAttempt': 'Última tentativa',
  'overview.noFigures':
    'Seu papel não mostra números aqui. Use o menu para chegar ao que você pode gerenciar.',
  'chart.logins': 'logins',
  'chart.successful': 'Bem-sucedidos',
  'chart.failed': 'Com falha',
  'chart.label': '{title}: gráfico de {what}, {first} e {second}',
  'chart.data': 'Dados de “{title}”',
  'chart.hour': 'Hora',
  'chart.day': 'Dia',
}
